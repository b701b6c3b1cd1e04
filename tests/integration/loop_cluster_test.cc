// The same loop graphs on one device, on three local devices and across
// three real `distflow server` processes (one part of each loop per task, or
// parts on two devices of one task)
// give identical results: nested loops, a cond inside a loop body, a loop
// inside a cond branch, zero iterations, parallel_iterations 1, and an error
// inside an iteration.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common_runtime/loop_test_graphs.h"
#include "distflow/common_runtime/session.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server_process.h"

namespace distflow {
namespace {

using test::Devices;
using test::F32;
using test::I32;
using ::testing::HasSubstr;

constexpr char kCluster[] = "worker=127.0.0.1:0,127.0.0.1:0,127.0.0.1:0";
const Devices kTasks = {"/job:worker/replica:0/task:0/device:CPU:0",
                        "/job:worker/replica:0/task:1/device:CPU:0",
                        "/job:worker/replica:0/task:2/device:CPU:0"};
// Two devices of one task: the worker splits its part of the loop again.
const Devices kTwoDevicesOfOneTask = {"/job:worker/replica:0/task:0/device:CPU:0",
                                      "/job:worker/replica:0/task:1/device:CPU:0",
                                      "/job:worker/replica:0/task:1/device:CPU:1"};
const Devices kLocalDevices = {"/device:CPU:0", "/device:CPU:1", "/device:CPU:2"};
const Devices kOneDevice = {"", "", ""};

using Feeds = std::vector<std::pair<std::string, Tensor>>;

class LoopClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int t = 0; t < 3; ++t) {
      tasks_.push_back(ServerProcess::Start(kCluster, "worker", t, {"--devices", "2"}));
      ASSERT_NE(tasks_.back(), nullptr);
    }
  }

  std::unique_ptr<Session> ClusterSession(const GraphDef& g) {
    auto spec = ClusterSpec::FromFlag(absl::StrCat(
        "worker=", tasks_[0]->address(), ",", tasks_[1]->address(), ",", tasks_[2]->address()));
    EXPECT_TRUE(spec.ok()) << spec.status();
    SessionOptions opts;
    opts.target = absl::StrCat("grpc://", tasks_[0]->address());
    *opts.config.mutable_cluster_def() = spec->def();
    opts.config.set_operation_timeout_in_ms(60000);
    return Created(NewSession(opts), g);
  }

  static std::unique_ptr<Session> LocalSession(const GraphDef& g) {
    SessionOptions opts;
    (*opts.config.mutable_device_count())["CPU"] = 3;
    opts.config.set_operation_timeout_in_ms(60000);
    return Created(NewSession(opts), g);
  }

  static std::unique_ptr<Session> Created(absl::StatusOr<std::unique_ptr<Session>> session,
                                          const GraphDef& g) {
    EXPECT_TRUE(session.ok()) << session.status();
    if (!session.ok()) return nullptr;
    absl::Status s = (*session)->Create(g);
    EXPECT_TRUE(s.ok()) << s;
    return *std::move(session);
  }

  // Runs `make(devices)` with `feeds` on one device, three devices and three
  // tasks; expects the same values everywhere and returns them.
  std::vector<Tensor> RunEverywhere(const std::function<GraphDef(const Devices&)>& make,
                                    const Feeds& feeds, const std::vector<std::string>& fetches) {
    std::vector<Tensor> one, three, tasks;
    auto local1 = LocalSession(make(kOneDevice));
    auto local3 = LocalSession(make(kLocalDevices));
    auto cluster = ClusterSession(make(kTasks));
    if (local1 == nullptr || local3 == nullptr || cluster == nullptr) return {};
    absl::Status s = local1->Run(feeds, fetches, {}, &one);
    EXPECT_TRUE(s.ok()) << s;
    s = local3->Run(feeds, fetches, {}, &three);
    EXPECT_TRUE(s.ok()) << s;
    s = cluster->Run(feeds, fetches, {}, &tasks);
    EXPECT_TRUE(s.ok()) << s;
    if (one.size() != fetches.size() || three.size() != one.size() || tasks.size() != one.size()) {
      ADD_FAILURE() << "missing results";
      return {};
    }
    for (size_t k = 0; k < one.size(); ++k) {
      EXPECT_EQ(one[k].DebugString(), three[k].DebugString()) << fetches[k];
      EXPECT_EQ(one[k].DebugString(), tasks[k].DebugString()) << fetches[k];
    }
    return one;
  }

  std::vector<std::unique_ptr<ServerProcess>> tasks_;
};

TEST_F(LoopClusterTest, SumLoop) {
  for (int32_t n : {0, 1, 20}) {
    auto out = RunEverywhere([](const Devices& d) { return test::SumLoop(d); },
                             {{"n", I32(n)}, {"x", F32(1.5f)}}, {"sum/Exit_0", "sum/Exit_1"});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].scalar<int32_t>(), n);
    EXPECT_EQ(out[1].scalar<float>(), test::SumLoopExpected(n, 1.5f));
  }
}

TEST_F(LoopClusterTest, NestedLoopsWithOneAndTenParallelIterations) {
  for (int parallel : {1, 10}) {
    auto out = RunEverywhere([parallel](const Devices& d) { return test::NestedLoop(d, parallel); },
                             {{"n", I32(5)}, {"m", I32(4)}}, {"outer/Exit_1", "outer/Exit_0"});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].scalar<int32_t>(), test::NestedLoopExpected(5, 4));
    EXPECT_EQ(out[1].scalar<int32_t>(), 5);
  }
}

TEST_F(LoopClusterTest, LoopSplitOverTasksAndOverDevicesOfATask) {
  for (int parallel : {1, 10}) {
    auto cluster = ClusterSession(test::NestedLoop(kTwoDevicesOfOneTask, parallel));
    ASSERT_NE(cluster, nullptr);
    std::vector<Tensor> out;
    absl::Status s = cluster->Run({{"n", I32(6)}, {"m", I32(3)}}, {"outer/Exit_1"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].scalar<int32_t>(), test::NestedLoopExpected(6, 3));
  }
}

TEST_F(LoopClusterTest, CondInsideTheBody) {
  auto out = RunEverywhere([](const Devices& d) { return test::CondInLoop(d); },
                           {{"n", I32(11)}, {"h", I32(4)}}, {"cond_loop/Exit_1"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].scalar<int32_t>(), test::CondInLoopExpected(11, 4));
}

TEST_F(LoopClusterTest, LoopInsideACondBranch) {
  for (bool p : {true, false}) {
    auto out = RunEverywhere([](const Devices& d) { return test::LoopInCond(d); },
                             {{"p", Tensor::Scalar<bool>(p)}, {"n", I32(7)}}, {"branch/Merge"});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].scalar<int32_t>(), p ? 7 : -7);
  }
}

TEST_F(LoopClusterTest, ErrorInsideAnIterationNamesTheNodeAcrossTasks) {
  auto cluster = ClusterSession(test::GatherLoop(kTasks));
  ASSERT_NE(cluster, nullptr);
  std::vector<Tensor> out;
  absl::Status s = cluster->Run({{"n", I32(12)}}, {"gather/Exit_1"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("gather/GatherV2"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("iteration 10"));
  // The cluster serves the next step.
  s = cluster->Run({{"n", I32(4)}}, {"gather/Exit_1"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<int32_t>(), 6);
}

}  // namespace
}  // namespace distflow
