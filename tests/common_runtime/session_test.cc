// DirectSession: results on one and several devices, feed and fetch
// validation, errors, timeouts, Close, stateful kernels, step stats and
// timelines, Extend, and many concurrent Runs.
#include "distflow/common_runtime/session.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "distflow/common_runtime/direct_session.h"
#include "distflow/common_runtime/timeline.h"
#include "distflow/framework/attr_value_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test_ops.h"

namespace distflow {
namespace {

using test::AddConst;
using test::AddNode;
using test::AddPlaceholder;
using ::testing::HasSubstr;

constexpr char kDev0[] = "/job:localhost/replica:0/task:0/device:CPU:0";

std::unique_ptr<Session> MakeSession(int num_devices, bool soft_placement = true) {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = num_devices;
  options.config.set_allow_soft_placement(soft_placement);
  options.config.set_inter_op_parallelism_threads(4);
  options.config.set_intra_op_parallelism_threads(1);
  auto session = NewSession(options);
  EXPECT_TRUE(session.ok()) << session.status();
  return *std::move(session);
}

NodeDef* AddOne(GraphDef* g, const std::string& name, const std::string& input,
                const std::string& device = "", bool expensive = false) {
  NodeDef* n = AddNode(g, name, "TestAddOne", {input}, device);
  AddNodeAttr("expensive", expensive, n);
  return n;
}

// x: int64[2] placeholder feeding nodes spread over CPU:0..2:
//   a = x + 1 (CPU:0), b = x + 1 (CPU:1, expensive), c = async(a) + 1 (CPU:2),
//   d = b + c (CPU:0), e = d + k (CPU:2) with k = 10 (CPU:1) and a control
//   edge from a, so data and control edges cross devices both ways.
GraphDef MixedGraph() {
  GraphDef g;
  AddPlaceholder(&g, "x", DT_INT64, PartialTensorShape({2}));
  AddOne(&g, "a", "x", "/device:CPU:0");
  AddOne(&g, "b", "x", "/device:CPU:1", /*expensive=*/true);
  AddNode(&g, "c", "TestAsyncAddOne", {"a"}, "/device:CPU:2");
  AddNode(&g, "d", "TestAdd", {"b", "c"}, "/device:CPU:0");
  AddConst(&g, "k", 10, "/device:CPU:1");
  AddNode(&g, "e", "TestAdd", {"d", "k", "^a"}, "/device:CPU:2");
  return g;
}

Tensor Vec(std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(v); }

std::vector<int64_t> Values(const Tensor& t) {
  auto f = t.flat<int64_t>();
  return std::vector<int64_t>(f.begin(), f.end());
}

TEST(SessionTest, SameResultsOnOneAndThreeDevices) {
  std::vector<std::vector<int64_t>> results[2];
  for (int which = 0; which < 2; ++which) {
    auto session = MakeSession(which == 0 ? 1 : 3);
    ASSERT_TRUE(session->Create(MixedGraph()).ok());
    std::vector<Tensor> out;
    RunOptions options;
    options.set_output_partition_graphs(true);
    RunMetadata metadata;
    ASSERT_TRUE(
        session->Run(options, {{"x", Vec({1, 5})}}, {"e", "d", "a:0"}, {}, &out, &metadata).ok());
    ASSERT_EQ(out.size(), 3u);
    for (const Tensor& t : out) results[which].push_back(Values(t));
    if (which == 1) {
      // Three partitions that talk through _Send/_Recv pairs.
      ASSERT_EQ(metadata.partition_graphs_size(), 3);
      int sends = 0, recvs = 0;
      for (const GraphDef& p : metadata.partition_graphs()) {
        for (const NodeDef& n : p.node()) {
          sends += n.op() == "_Send";
          recvs += n.op() == "_Recv";
        }
      }
      EXPECT_GE(sends, 4);
      EXPECT_GE(recvs, 4);
    } else {
      EXPECT_EQ(metadata.partition_graphs_size(), 1);
    }
  }
  // d = (x+1) + (x+1+1), e = d + 10.
  EXPECT_EQ(results[0], (std::vector<std::vector<int64_t>>{{15, 23}, {5, 13}, {2, 6}}));
  EXPECT_EQ(results[0], results[1]);
}

TEST(SessionTest, DuplicateFetchesReturnTheSameTensor) {
  auto session = MakeSession(2);
  ASSERT_TRUE(session->Create(MixedGraph()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Vec({0, 0})}}, {"a", "a", "a:0", "d"}, {}, &out).ok());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(Values(out[0]), (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(out[0].SharesBufferWith(out[1]));
  EXPECT_TRUE(out[0].SharesBufferWith(out[2]));
  EXPECT_EQ(Values(out[3]), (std::vector<int64_t>{3, 3}));
}

TEST(SessionTest, ConsumersNeverWriteIntoAConst) {
  // Elementwise kernels write their output into an input buffer no one else
  // holds; a Const's consumers read its tensor in place and must leave it.
  auto session = MakeSession(1);
  GraphDef g;
  NodeDef* k = AddNode(&g, "k", "Const", {});
  AddNodeAttr("dtype", DT_INT64, k);
  AddNodeAttr("value", Tensor::Scalar<int64_t>(10), k);
  AddNodeAttr("T", DT_INT64, AddNode(&g, "neg", "Neg", {"k"}));
  AddNodeAttr("T", DT_INT64, AddNode(&g, "twice", "AddV2", {"k", "k"}));
  ASSERT_TRUE(session->Create(g).ok());
  for (int step = 0; step < 3; ++step) {
    std::vector<Tensor> out;
    ASSERT_TRUE(session->Run({}, {"neg", "twice", "k"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<int64_t>(), -10);
    EXPECT_EQ(out[1].scalar<int64_t>(), 20);
    EXPECT_EQ(out[2].scalar<int64_t>(), 10);
  }
}

TEST(SessionTest, FetchingAFedTensorReturnsTheFedValue) {
  auto session = MakeSession(1);
  ASSERT_TRUE(session->Create(MixedGraph()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(
      session->Run({{"x", Vec({4, 4})}, {"a", Vec({100, 200})}}, {"a", "c", "x"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<int64_t>{100, 200}));
  EXPECT_EQ(Values(out[1]), (std::vector<int64_t>{101, 201}));
  EXPECT_EQ(Values(out[2]), (std::vector<int64_t>{4, 4}));
}

TEST(SessionTest, FeedAndFetchErrorsNameTheTensor) {
  auto session = MakeSession(2);
  ASSERT_TRUE(session->Create(MixedGraph()).ok());
  std::vector<Tensor> out;
  struct Case {
    std::vector<std::pair<std::string, Tensor>> feeds;
    std::vector<std::string> fetches;
    std::vector<std::string> targets;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{{"nope", Vec({1, 2})}}, {"a"}, {}, "nope"},
      {{{"x", Vec({1, 2})}}, {"missing:0"}, {}, "missing"},
      {{{"x", Vec({1, 2})}}, {"a:3"}, {}, "a:3"},
      {{{"x", Vec({1, 2})}}, {"^a"}, {}, "^a"},
      {{{"x", Vec({1, 2})}}, {"a:x"}, {}, "a:x"},
      {{{"x", Vec({1, 2})}}, {}, {"no_such_target"}, "no_such_target"},
      {{{"x", Tensor::FromVector<float>({1.f, 2.f})}}, {"a"}, {}, "'x'"},
      {{{"x", Vec({1, 2, 3})}}, {"a"}, {}, "'x'"},
      {{{"x", Tensor::Scalar<int64_t>(1)}}, {"a"}, {}, "'x'"},
      {{{"x", Vec({1, 2})}, {"x:0", Vec({1, 2})}}, {"a"}, {}, "x:0"},
      {{{"x", Vec({1, 2})}, {"b", Tensor::Scalar<int32_t>(1)}}, {"d"}, {}, "'b'"},
  };
  for (const Case& c : cases) {
    absl::Status s = session->Run(c.feeds, c.fetches, c.targets, &out);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.expect << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.expect)) << s;
  }
  // Type and shape messages say what was expected.
  absl::Status s = session->Run({{"x", Tensor::FromVector<float>({1.f, 2.f})}}, {"a"}, {}, &out);
  EXPECT_THAT(std::string(s.message()), HasSubstr("int64"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("float32"));
  s = session->Run({{"x", Vec({1, 2, 3})}}, {"a"}, {}, &out);
  EXPECT_THAT(std::string(s.message()), HasSubstr("[3]"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("[2]"));
  // The session still works afterwards.
  ASSERT_TRUE(session->Run({{"x", Vec({1, 2})}}, {"a"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<int64_t>{2, 3}));
}

TEST(SessionTest, FeedShapesUncheckedTakesAnyShapeButStillChecksTheDtype) {
  SessionOptions options;
  options.config.set_feed_shapes_unchecked(true);
  auto session = NewSession(options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(MixedGraph()).ok());
  std::vector<Tensor> out;
  // x is declared int64[2]; as in TensorFlow's C++ session, [3] runs.
  absl::Status s = (*session)->Run({{"x", Vec({1, 2, 3})}}, {"a"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Values(out[0]), (std::vector<int64_t>{2, 3, 4}));
  s = (*session)->Run({{"x", Tensor::FromVector<float>({1.f, 2.f})}}, {"a"}, {}, &out);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("float32"));
}

TEST(SessionTest, UnfedPlaceholderFails) {
  auto session = MakeSession(1);
  ASSERT_TRUE(session->Create(MixedGraph()).ok());
  std::vector<Tensor> out;
  absl::Status s = session->Run({}, {"a"}, {}, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("x"));
}

TEST(SessionTest, StepErrorNamesTheNode) {
  auto session = MakeSession(3);
  GraphDef g = MixedGraph();
  AddNode(&g, "bad", "TestFail", {"c"}, "/device:CPU:1");
  AddNode(&g, "after_bad", "TestAdd", {"bad", "d"}, "/device:CPU:2");
  ASSERT_TRUE(session->Create(g).ok());
  std::vector<Tensor> out;
  for (int i = 0; i < 10; ++i) {
    absl::Status s = session->Run({{"x", Vec({1, 2})}}, {"after_bad", "e"}, {}, &out);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_EQ(s.message(), "node 'bad' (TestFail): boom");
  }
  ASSERT_TRUE(session->Run({{"x", Vec({1, 2})}}, {"e"}, {}, &out).ok());
}

TEST(SessionTest, TimeoutIsDeadlineExceededAndReleasesEverything) {
  auto session = MakeSession(3);
  GraphDef g = MixedGraph();
  AddNode(&g, "block", "TestBlock", {"a"}, "/device:CPU:1");
  AddNode(&g, "waits", "TestAdd", {"block", "c"}, "/device:CPU:2");
  ASSERT_TRUE(session->Create(g).ok());
  RunOptions options;
  options.set_timeout_in_ms(50);
  std::vector<Tensor> out;
  absl::Status s = session->Run(options, {{"x", Vec({1, 2})}}, {"waits", "e"}, {}, &out, nullptr);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  // Other signatures still run.
  ASSERT_TRUE(session->Run({{"x", Vec({1, 2})}}, {"e"}, {}, &out).ok());
}

TEST(SessionTest, OperationTimeoutFromConfig) {
  SessionOptions options;
  options.config.set_operation_timeout_in_ms(30);
  auto session = NewSession(options);
  ASSERT_TRUE(session.ok());
  GraphDef g;
  AddConst(&g, "c", 1);
  AddNode(&g, "block", "TestBlock", {"c"});
  ASSERT_TRUE((*session)->Create(g).ok());
  std::vector<Tensor> out;
  EXPECT_TRUE(absl::IsDeadlineExceeded((*session)->Run({}, {"block"}, {}, &out)));
}

TEST(SessionTest, CloseCancelsRunningStepsAndLaterRuns) {
  auto session = MakeSession(2);
  GraphDef g;
  AddConst(&g, "c", 1);
  AddNode(&g, "block", "TestBlock", {"c"}, "/device:CPU:1");
  ASSERT_TRUE(session->Create(g).ok());
  absl::Status status;
  absl::Notification finished;
  std::thread runner([&] {
    std::vector<Tensor> out;
    status = session->Run({}, {"block"}, {}, &out);
    finished.Notify();
  });
  EXPECT_FALSE(finished.WaitForNotificationWithTimeout(absl::Milliseconds(30)));
  ASSERT_TRUE(session->Close().ok());
  runner.join();
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  std::vector<Tensor> out;
  EXPECT_TRUE(absl::IsCancelled(session->Run({}, {"c"}, {}, &out)));
}

TEST(SessionTest, RunBeforeCreateIsFailedPrecondition) {
  auto session = MakeSession(1);
  std::vector<Tensor> out;
  EXPECT_TRUE(absl::IsFailedPrecondition(session->Run({}, {"c"}, {}, &out)));
  GraphDef g;
  AddConst(&g, "c", 1);
  ASSERT_TRUE(session->Create(g).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(session->Create(g)));
}

TEST(SessionTest, StatefulKernelsAreSharedAcrossSignaturesAndPlacementsStick) {
  auto session = MakeSession(3, /*soft_placement=*/false);
  GraphDef g;
  AddNode(&g, "counter", "TestCounter", {});
  AddConst(&g, "one", 1, "/device:CPU:2");
  AddNode(&g, "sum", "TestAdd", {"counter", "one"}, "/device:CPU:2");
  ASSERT_TRUE(session->Create(g).ok());
  std::vector<Tensor> out;
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata first;
  ASSERT_TRUE(session->Run(options, {}, {"counter"}, {}, &out, &first).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 1);
  ASSERT_TRUE(session->Run({}, {"sum"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 3);
  RunMetadata third;
  ASSERT_TRUE(session->Run(options, {}, {"counter", "sum"}, {}, &out, &third).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 3);
  EXPECT_EQ(out[1].scalar<int64_t>(), 4);
  auto device_of = [](const RunMetadata& m, const std::string& node) {
    for (const GraphDef& p : m.partition_graphs()) {
      for (const NodeDef& n : p.node()) {
        if (n.name() == node) return n.device();
      }
    }
    return std::string();
  };
  EXPECT_EQ(device_of(first, "counter"), kDev0);
  EXPECT_EQ(device_of(third, "counter"), kDev0);
}

TEST(SessionTest, StepStatsAndTimeline) {
  auto session = MakeSession(3);
  ASSERT_TRUE(session->Create(MixedGraph()).ok());
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run(options, {{"x", Vec({1, 2})}}, {"e"}, {}, &out, &metadata).ok());
  const StepStats& stats = metadata.step_stats();
  ASSERT_EQ(stats.dev_stats_size(), 3);
  std::set<std::string> nodes;
  for (const DeviceStepStats& dev : stats.dev_stats()) {
    EXPECT_THAT(dev.device(), HasSubstr("/device:CPU:"));
    for (const NodeExecStats& n : dev.node_stats()) {
      nodes.insert(n.node_name());
      EXPECT_GT(n.all_start_micros(), 0);
      EXPECT_LE(n.op_start_rel_micros(), n.op_end_rel_micros());
      EXPECT_LE(n.op_end_rel_micros(), n.all_end_rel_micros());
      EXPECT_GT(n.thread_id(), 0u);
      if (n.node_name() == "d") {
        ASSERT_EQ(n.output_size(), 1);
        EXPECT_EQ(n.output(0).tensor_description().dtype(), DT_INT64);
        EXPECT_EQ(n.output(0).tensor_description().allocation_description().requested_bytes(), 16);
      }
    }
  }
  for (const char* name : {"a", "b", "c", "d", "e", "k"}) EXPECT_TRUE(nodes.count(name)) << name;
  // No stats without tracing.
  RunMetadata quiet;
  ASSERT_TRUE(session->Run(RunOptions(), {{"x", Vec({1, 2})}}, {"e"}, {}, &out, &quiet).ok());
  EXPECT_EQ(quiet.step_stats().dev_stats_size(), 0);

  const std::string json = StepStatsToChromeTrace(stats);
  nlohmann::json trace = nlohmann::json::parse(json);
  ASSERT_TRUE(trace.contains("traceEvents"));
  int complete_events = 0;
  std::set<std::string> traced;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++complete_events;
    traced.insert(e["name"].get<std::string>());
    EXPECT_TRUE(e.contains("pid") && e.contains("tid") && e.contains("ts") && e.contains("dur") &&
                e.contains("args"));
    EXPECT_GE(e["dur"].get<int64_t>(), 0);
  }
  EXPECT_EQ(traced, nodes);
  EXPECT_GE(complete_events, 6);
}

TEST(SessionTest, ExtendAddsNodes) {
  auto session = MakeSession(1);
  GraphDef g;
  AddConst(&g, "c", 1);
  ASSERT_TRUE(session->Extend(g).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"c"}, {}, &out).ok());
  GraphDef more;
  AddOne(&more, "d", "c");
  ASSERT_TRUE(session->Extend(more).ok());
  ASSERT_TRUE(session->Run({}, {"d", "c"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 2);
  absl::Status dup = session->Extend(more);
  EXPECT_TRUE(absl::IsInvalidArgument(dup)) << dup;
  EXPECT_THAT(std::string(dup.message()), HasSubstr("d"));
  ASSERT_TRUE(session->Run({}, {"d"}, {}, &out).ok());
}

TEST(SessionTest, TargetsRunWithoutFetches) {
  auto session = MakeSession(2);
  GraphDef g;
  AddNode(&g, "counter", "TestCounter", {}, "/device:CPU:1");
  AddNode(&g, "group", "NoOp", {"^counter"});
  ASSERT_TRUE(session->Create(g).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"group"}, &out).ok());
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(session->Run({}, {"counter"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 2);
  // Nothing to run at all is fine too.
  ASSERT_TRUE(session->Run({}, {}, {}, &out).ok());
}

TEST(SessionTest, NewSessionTargets) {
  SessionOptions options;
  options.target = "grpc://localhost:1";
  EXPECT_TRUE(absl::IsNotFound(NewSession(options).status()));
  RegisterSessionFactory("fake://", [](const SessionOptions& o) {
    SessionOptions local = o;
    local.target.clear();
    return NewSession(local);
  });
  options.target = "fake://anything";
  auto session = NewSession(options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<DeviceAttributes> devices;
  ASSERT_TRUE((*session)->ListDevices(&devices).ok());
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name(), kDev0);

  SessionOptions bad;
  (*bad.config.mutable_device_count())["CPU"] = -1;
  EXPECT_TRUE(absl::IsInvalidArgument(NewSession(bad).status()));
}

TEST(SessionTest, ListDevicesNamesEveryCpu) {
  auto session = MakeSession(3);
  std::vector<DeviceAttributes> devices;
  ASSERT_TRUE(session->ListDevices(&devices).ok());
  ASSERT_EQ(devices.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(devices[i].name(), absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", i));
    EXPECT_EQ(devices[i].device_type(), "CPU");
    EXPECT_NE(devices[i].incarnation(), 0u);
  }
}

TEST(SessionTest, ConcurrentRunsStress) {
  auto session = MakeSession(3);
  ASSERT_TRUE(session->Create(MixedGraph()).ok());
  constexpr int kThreads = 8;
  constexpr int kRuns = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        const int64_t x0 = t * 100000 + i, x1 = -i;
        std::vector<Tensor> out;
        absl::Status s;
        // Three signatures interleave, so executables are built and shared
        // concurrently too.
        switch (i % 3) {
          case 0:
            s = session->Run({{"x", Vec({x0, x1})}}, {"e", "d"}, {}, &out);
            if (s.ok() && (Values(out[0]) != std::vector<int64_t>{2 * x0 + 13, 2 * x1 + 13} ||
                           Values(out[1]) != std::vector<int64_t>{2 * x0 + 3, 2 * x1 + 3})) {
              ++failures;
            }
            break;
          case 1:
            s = session->Run({{"x", Vec({x0, x1})}}, {"c"}, {}, &out);
            if (s.ok() && Values(out[0]) != std::vector<int64_t>{x0 + 2, x1 + 2}) ++failures;
            break;
          default:
            s = session->Run({{"x", Vec({x0, x1})}, {"b", Vec({7, 7})}}, {"d", "b"}, {"e"}, &out);
            if (s.ok() && (Values(out[0]) != std::vector<int64_t>{x0 + 9, x1 + 9} ||
                           Values(out[1]) != std::vector<int64_t>{7, 7})) {
              ++failures;
            }
        }
        if (!s.ok()) {
          ADD_FAILURE() << s;
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace distflow
