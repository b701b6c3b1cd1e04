// Loops in the executor, as TF1's tf.while_loop writes them: nested loops,
// conds inside loop bodies, parallel_iterations, constant Enters, zero
// iterations, errors inside an iteration, long loops in flat memory; and the
// same graphs split over three devices.
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "distflow/common_runtime/session.h"
#include "distflow/core/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loop_test_graphs.h"

namespace distflow {
namespace {

using test::Devices;
using test::F32;
using test::I32;
using ::testing::HasSubstr;

const Devices kOneDevice = {"", "", ""};
const Devices kThreeDevices = {"/device:CPU:0", "/device:CPU:1", "/device:CPU:2"};

std::unique_ptr<Session> MakeSession(const GraphDef& g, int devices = 3) {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = devices;
  auto session = NewSession(options);
  EXPECT_TRUE(session.ok()) << session.status();
  absl::Status s = (*session)->Create(g);
  EXPECT_TRUE(s.ok()) << s;
  return *std::move(session);
}

absl::StatusOr<std::vector<Tensor>> RunLoop(
    Session* session, const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches) {
  // Bounded: a loop that never ends fails the test instead of hanging it.
  RunOptions options;
  options.set_timeout_in_ms(getenv("LOOP_TEST_DUMP") != nullptr ? 3000 : 60000);
  options.set_output_partition_graphs(getenv("LOOP_TEST_DUMP") != nullptr);
  std::vector<Tensor> out;
  RunMetadata metadata;
  absl::Status s = session->Run(options, feeds, fetches, {}, &out, &metadata);
  if (getenv("LOOP_TEST_DUMP") != nullptr) std::cerr << metadata.DebugString();
  DF_RETURN_IF_ERROR(s);
  return out;
}

class LoopTest : public ::testing::TestWithParam<Devices> {};

TEST_P(LoopTest, SumLoopCountsAndAccumulates) {
  auto session = MakeSession(test::SumLoop(GetParam()));
  for (int32_t n : {0, 1, 2, 7, 50}) {
    auto out =
        RunLoop(session.get(), {{"n", I32(n)}, {"x", F32(0.5f)}}, {"sum/Exit_0", "sum/Exit_1"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<int32_t>(), n);
    EXPECT_EQ((*out)[1].scalar<float>(), test::SumLoopExpected(n, 0.5f));
  }
}

TEST_P(LoopTest, ZeroIterationsGiveTheInitialValues) {
  auto session = MakeSession(test::SumLoop(GetParam()));
  auto out = RunLoop(session.get(), {{"n", I32(-3)}, {"x", F32(2)}}, {"sum/Exit_0", "sum/Exit_1"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 0);
  EXPECT_EQ((*out)[1].scalar<float>(), 0.0f);
}

TEST_P(LoopTest, NestedLoops) {
  auto session = MakeSession(test::NestedLoop(GetParam()));
  for (auto [n, m] :
       std::vector<std::pair<int32_t, int32_t>>{{0, 3}, {3, 0}, {1, 1}, {4, 5}, {9, 7}}) {
    auto out =
        RunLoop(session.get(), {{"n", I32(n)}, {"m", I32(m)}}, {"outer/Exit_1", "outer/Exit_0"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<int32_t>(), test::NestedLoopExpected(n, m)) << n << "x" << m;
    EXPECT_EQ((*out)[1].scalar<int32_t>(), n);
  }
}

TEST_P(LoopTest, CondInsideTheBody) {
  auto session = MakeSession(test::CondInLoop(GetParam()));
  for (auto [n, h] : std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {5, 0}, {5, 9}, {12, 6}}) {
    auto out = RunLoop(session.get(), {{"n", I32(n)}, {"h", I32(h)}}, {"cond_loop/Exit_1"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<int32_t>(), test::CondInLoopExpected(n, h));
  }
}

TEST_P(LoopTest, LoopInTheBranchNotTakenIsDead) {
  auto session = MakeSession(test::LoopInCond(GetParam()));
  for (bool p : {true, false, true}) {
    for (int32_t n : {0, 6}) {
      auto out =
          RunLoop(session.get(), {{"p", Tensor::Scalar<bool>(p)}, {"n", I32(n)}}, {"branch/Merge"});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].scalar<int32_t>(), p ? n : -7) << p << " " << n;
    }
  }
  // The loop's own result is dead when its branch is not taken.
  auto out = RunLoop(session.get(), {{"p", Tensor::Scalar<bool>(false)}, {"n", I32(3)}},
                     {"branch/loop/Exit_0"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("dead"));
}

TEST_P(LoopTest, ParallelIterationsOneAndTenAgree) {
  auto one = MakeSession(test::NestedLoop(GetParam(), 1));
  auto ten = MakeSession(test::NestedLoop(GetParam(), 10));
  auto sum_one = MakeSession(test::SumLoop(GetParam(), 1));
  for (int32_t n : {0, 1, 6, 13}) {
    auto a = RunLoop(one.get(), {{"n", I32(n)}, {"m", I32(n + 2)}}, {"outer/Exit_1"});
    auto b = RunLoop(ten.get(), {{"n", I32(n)}, {"m", I32(n + 2)}}, {"outer/Exit_1"});
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ((*a)[0].scalar<int32_t>(), (*b)[0].scalar<int32_t>());
    EXPECT_EQ((*a)[0].scalar<int32_t>(), test::NestedLoopExpected(n, n + 2));
    auto s = RunLoop(sum_one.get(), {{"n", I32(n)}, {"x", F32(3)}}, {"sum/Exit_1"});
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ((*s)[0].scalar<float>(), test::SumLoopExpected(n, 3));
  }
}

TEST_P(LoopTest, ErrorInsideAnIterationNamesTheNode) {
  auto session = MakeSession(test::GatherLoop(GetParam()));
  auto ok = RunLoop(session.get(), {{"n", I32(10)}}, {"gather/Exit_1"});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].scalar<int32_t>(), 45);
  auto bad = RunLoop(session.get(), {{"n", I32(15)}}, {"gather/Exit_1"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("gather/GatherV2"));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("iteration 10"));
  // The session still works afterwards.
  ok = RunLoop(session.get(), {{"n", I32(3)}}, {"gather/Exit_1"});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].scalar<int32_t>(), 3);
}

TEST_P(LoopTest, ConcurrentStepsKeepTheirFramesApart) {
  auto session = MakeSession(test::NestedLoop(GetParam()));
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 10; ++k) {
        const int32_t n = (t + k) % 5, m = t + 2;
        auto out = RunLoop(session.get(), {{"n", I32(n)}, {"m", I32(m)}}, {"outer/Exit_1"});
        if (!out.ok() || (*out)[0].scalar<int32_t>() != test::NestedLoopExpected(n, m)) bad++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(OneAndThreeDevices, LoopTest, ::testing::Values(kOneDevice, kThreeDevices),
                         [](const auto& info) { return info.index == 0 ? "One" : "Three"; });

// A variable passed into the loop by reference (RefEnter, constant): the
// body adds to it in place once per iteration.
TEST(LoopRefTest, RefEnterUpdatesTheVariableEveryIteration) {
  GraphDef g;
  test::TfLoopWriter w(&g);
  w.Placeholder("n", DT_INT32);
  NodeDef* v = w.Node("v", "VariableV2", {});
  AddNodeAttr("dtype", DT_INT32, v);
  AddNodeAttr("shape", TensorShape({}), v);
  w.Const("zero", I32(0));
  AddNodeAttr("T", DT_INT32, w.Node("init", "Assign", {"v", "zero"}));
  w.While(
      "count", {{"zero", DT_INT32}}, {{"n", DT_INT32}},
      [&](const test::TfLoopWriter::Frame& f) {
        return w.Binary("count/Less", "Less", f.vars[0], f.invariants[0], DT_INT32);
      },
      [&](const test::TfLoopWriter::Frame& f) {
        NodeDef* enter = w.Node("count/RefEnter", "RefEnter", {"v"});
        AddNodeAttr("T", DT_INT32, enter);
        AddNodeAttr("frame_name", "count/while_context", enter);
        AddNodeAttr("is_constant", true, enter);
        w.Const("count/two", I32(2), f.pivot);
        w.Binary("count/AssignAdd", "AssignAdd", "count/RefEnter", "count/two", DT_INT32);
        w.Const("count/one", I32(1), f.pivot);
        NodeDef* next = w.Node("count/add", "AddV2", {f.vars[0], "count/one", "^count/AssignAdd"});
        AddNodeAttr("T", DT_INT32, next);
        return std::vector<std::string>{"count/add"};
      });
  auto session = MakeSession(g, 1);
  for (int32_t n : {0, 4, 9}) {
    std::vector<Tensor> out;
    ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
    auto got = RunLoop(session.get(), {{"n", I32(n)}}, {"count/Exit_0"});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ((*got)[0].scalar<int32_t>(), n);
    ASSERT_TRUE(session->Run({}, {"v"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int32_t>(), 2 * n);
  }
}

// Resident memory in bytes, from /proc/self/statm.
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

TEST(LoopMemoryTest, HundredThousandIterationsRunInFlatMemory) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer keeps freed memory in quarantine: resident memory grows "
                  "whatever the executor frees";
#endif
  auto session = MakeSession(test::SumLoop(kOneDevice), 1);
  auto warm = RunLoop(session.get(), {{"n", I32(1000)}, {"x", F32(0.25f)}}, {"sum/Exit_1"});
  ASSERT_TRUE(warm.ok()) << warm.status();
  const int64_t before = ResidentBytes();
  auto out =
      RunLoop(session.get(), {{"n", I32(100000)}, {"x", F32(0.25f)}}, {"sum/Exit_0", "sum/Exit_1"});
  ASSERT_TRUE(out.ok()) << out.status();
  const int64_t after = ResidentBytes();
  EXPECT_EQ((*out)[0].scalar<int32_t>(), 100000);
  EXPECT_EQ((*out)[1].scalar<float>(), test::SumLoopExpected(100000, 0.25f));
  // Each iteration's state is freed when it ends: keeping 100 000 of them
  // would take tens of megabytes. A generous bound, not a measurement.
  EXPECT_LT(after - before, int64_t{16} << 20) << "RSS grew from " << before << " to " << after;
}

}  // namespace
}  // namespace distflow
