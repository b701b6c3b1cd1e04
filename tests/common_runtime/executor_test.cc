// Executor semantics: scheduling shapes (diamond, fan-out/fan-in, long
// chains, wide fan-out), async kernels, control edges, dead values, errors
// naming the failing node, cancellation, and the barrier joining executors.
#include "distflow/common_runtime/executor.h"
#include "distflow/common_runtime/executor_state.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "distflow/common_runtime/cpu_device.h"
#include "distflow/common_runtime/device_mgr.h"
#include "distflow/common_runtime/intra_process_rendezvous.h"
#include "distflow/common_runtime/step_stats_collector.h"
#include "distflow/core/threadpool.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/graph/graph_constructor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_ops.h"

namespace distflow {
namespace {

using test::AddConst;
using test::AddNode;
using ::testing::HasSubstr;

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr uint64_t kIncarnation = 1;

// A _Send of `input` to the client under `tensor_name`.
void AddSend(GraphDef* g, const std::string& name, const std::string& input,
             const std::string& tensor_name) {
  NodeDef* n = AddNode(g, name, "_Send", {input});
  AddNodeAttr("T", DT_INT64, n);
  AddNodeAttr("tensor_name", tensor_name, n);
  AddNodeAttr("send_device", kCpu0, n);
  AddNodeAttr("recv_device", kCpu0, n);
  AddNodeAttr("send_device_incarnation", static_cast<int64_t>(kIncarnation), n);
  AddNodeAttr("client_terminated", true, n);
}

void AddRecv(GraphDef* g, const std::string& name, const std::string& tensor_name) {
  NodeDef* n = AddNode(g, name, "_Recv", {});
  AddNodeAttr("tensor_type", DT_INT64, n);
  AddNodeAttr("tensor_name", tensor_name, n);
  AddNodeAttr("send_device", kCpu0, n);
  AddNodeAttr("recv_device", kCpu0, n);
  AddNodeAttr("send_device_incarnation", static_cast<int64_t>(kIncarnation), n);
  AddNodeAttr("client_terminated", true, n);
}

Rendezvous::ParsedKey ClientKey(const std::string& tensor_name) {
  Rendezvous::ParsedKey key;
  EXPECT_TRUE(
      Rendezvous::ParseKey(Rendezvous::CreateKey(kCpu0, kIncarnation, kCpu0, tensor_name, {}), &key)
          .ok());
  return key;
}

NodeDef* AddOne(GraphDef* g, const std::string& name, const std::string& input,
                bool expensive = false) {
  NodeDef* n = AddNode(g, name, "TestAddOne", {input});
  AddNodeAttr("expensive", expensive, n);
  return n;
}

// A chain of `length` nodes after `input` that each add one, alternately
// TestAsyncAddOne and TestAddOne (expensive where its index is a multiple of
// `expensive_every`, never for 0); returns the last node's name.
std::string AddAsyncChain(GraphDef* g, const std::string& input, int length, int expensive_every) {
  std::string prev = input;
  for (int i = 0; i < length; ++i) {
    std::string name = absl::StrCat("n", i);
    if (i % 2 == 0) {
      AddNode(g, name, "TestAsyncAddOne", {prev});
    } else {
      AddOne(g, name, prev, /*expensive=*/expensive_every != 0 && i % expensive_every == 0);
    }
    prev = name;
  }
  return prev;
}

class ExecutorTest : public ::testing::Test {
 protected:
  ExecutorTest() : pool_("inter_op", 4) {
    ConfigProto config;
    config.set_intra_op_parallelism_threads(1);
    auto devices = CreateCpuDevices(config, "/job:localhost/replica:0/task:0");
    EXPECT_TRUE(devices.ok());
    mgr_ = std::make_unique<DeviceMgr>(*std::move(devices));
  }

  absl::StatusOr<std::unique_ptr<Executor>> Build(const GraphDef& def) {
    auto graph = std::make_unique<Graph>();
    DF_RETURN_IF_ERROR(ConvertGraphDefToGraph({}, def, graph.get()));
    Executor::Params params;
    params.device = mgr_->ListDevices()[0];
    return Executor::Create(std::move(params), std::move(graph));
  }

  Executor::Args MakeArgs(Rendezvous* rendez, CancellationManager* cm,
                          StepStatsCollector* stats = nullptr) {
    Executor::Args args;
    args.step_id = ++step_;
    args.rendezvous = rendez;
    args.cancellation_manager = cm;
    args.stats_collector = stats;
    args.runner = [this](Executor::Closure c) { pool_.Schedule(std::move(c)); };
    return args;
  }

  RefPtr<Rendezvous> NewRendezvous() {
    return RefPtr<Rendezvous>(new IntraProcessRendezvous(mgr_.get()));
  }

  // Runs `def` once and returns the value sent under "out".
  absl::StatusOr<int64_t> RunAndFetch(const GraphDef& def) {
    DF_ASSIGN_OR_RETURN(std::unique_ptr<Executor> exec, Build(def));
    RefPtr<Rendezvous> rendez = NewRendezvous();
    CancellationManager cm;
    DF_RETURN_IF_ERROR(exec->Run(MakeArgs(rendez.get(), &cm)));
    Tensor v;
    bool dead = false;
    DF_RETURN_IF_ERROR(rendez->Recv(ClientKey("out"), {}, &v, &dead));
    if (dead) return errors::Internal("dead output");
    return v.scalar<int64_t>();
  }

  ThreadPool pool_;
  std::unique_ptr<DeviceMgr> mgr_;
  int64_t step_ = 0;
};

TEST_F(ExecutorTest, EmptyGraphFinishes) {
  auto exec = Build(GraphDef());
  ASSERT_TRUE(exec.ok()) << exec.status();
  CancellationManager cm;
  RefPtr<Rendezvous> rendez = NewRendezvous();
  EXPECT_TRUE((*exec)->Run(MakeArgs(rendez.get(), &cm)).ok());
}

TEST_F(ExecutorTest, Diamond) {
  GraphDef g;
  AddConst(&g, "c", 1);
  AddOne(&g, "a", "c");
  AddOne(&g, "b", "c", /*expensive=*/true);
  AddNode(&g, "d", "TestAdd", {"a", "b"});
  AddSend(&g, "send", "d", "out");
  auto v = RunAndFetch(g);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 4);
}

TEST_F(ExecutorTest, FanOutFanIn) {
  GraphDef g;
  AddConst(&g, "c", 1);
  NodeDef* sum = nullptr;
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) {
    names.push_back(absl::StrCat("a", i));
    AddOne(&g, names.back(), "c", /*expensive=*/i % 3 == 0);
  }
  sum = AddNode(&g, "sum", "TestSum", names);
  AddNodeAttr("N", int64_t{100}, sum);
  AddSend(&g, "send", "sum", "out");
  auto v = RunAndFetch(g);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 200);
}

TEST_F(ExecutorTest, LongChain) {
  constexpr int kLength = 100000;
  GraphDef g;
  AddConst(&g, "c", 0);
  std::string prev = "c";
  for (int i = 0; i < kLength; ++i) {
    std::string name = absl::StrCat("n", i);
    // A few expensive nodes in the chain hop threads.
    AddOne(&g, name, prev, /*expensive=*/i % 10000 == 0);
    prev = name;
  }
  AddSend(&g, "send", prev, "out");
  auto v = RunAndFetch(g);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, kLength);
}

TEST_F(ExecutorTest, WideFanOut) {
  constexpr int kWidth = 10000;
  GraphDef g;
  AddConst(&g, "c", 2);
  std::vector<std::string> names;
  for (int i = 0; i < kWidth; ++i) {
    names.push_back(absl::StrCat("w", i));
    AddOne(&g, names.back(), "c", /*expensive=*/i % 2 == 0);
  }
  NodeDef* sum = AddNode(&g, "sum", "TestSum", names);
  AddNodeAttr("N", int64_t{kWidth}, sum);
  AddSend(&g, "send", "sum", "out");
  auto v = RunAndFetch(g);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 3 * kWidth);
}

TEST_F(ExecutorTest, AsyncKernels) {
  GraphDef g;
  AddConst(&g, "c", 0);
  const std::string prev = AddAsyncChain(&g, "c", 200, /*expensive_every=*/0);
  AddSend(&g, "send", prev, "out");
  auto v = RunAndFetch(g);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 200);
}

// With a runner that runs closures at once, an async kernel's callback runs
// inside its ComputeAsync and an expensive node in a nested loop: the nodes
// they make ready join the queue of the loop that is still running a node.
TEST_F(ExecutorTest, InlineRunnerRunsAsyncCallbacksAndFanOutsInPlace) {
  GraphDef g;
  AddConst(&g, "c", 0);
  const std::string prev = AddAsyncChain(&g, "c", 100, /*expensive_every=*/7);
  std::vector<std::string> names;
  for (int i = 0; i < 20; ++i) {
    names.push_back(absl::StrCat("f", i));
    AddOne(&g, names.back(), prev, /*expensive=*/i % 3 == 0);
  }
  NodeDef* sum = AddNode(&g, "sum", "TestSum", names);
  AddNodeAttr("N", int64_t{20}, sum);
  AddSend(&g, "send", "sum", "out");
  auto exec = Build(g);
  ASSERT_TRUE(exec.ok()) << exec.status();
  for (int step = 0; step < 3; ++step) {
    RefPtr<Rendezvous> rendez = NewRendezvous();
    CancellationManager cm;
    Executor::Args args = MakeArgs(rendez.get(), &cm);
    args.runner = [](Executor::Closure c) { c(); };
    ASSERT_TRUE((*exec)->Run(args).ok());
    Tensor v;
    bool dead = false;
    ASSERT_TRUE(rendez->Recv(ClientKey("out"), {}, &v, &dead).ok());
    ASSERT_FALSE(dead);
    EXPECT_EQ(v.scalar<int64_t>(), 20 * 101);
  }
}

TEST_F(ExecutorTest, RecvAndSendThroughTheRendezvous) {
  GraphDef g;
  AddRecv(&g, "recv", "in");
  AddOne(&g, "a", "recv");
  AddSend(&g, "send", "a", "out");
  auto exec = Build(g);
  ASSERT_TRUE(exec.ok()) << exec.status();
  RefPtr<Rendezvous> rendez = NewRendezvous();
  CancellationManager cm;
  absl::Notification done;
  absl::Status status;
  (*exec)->RunAsync(MakeArgs(rendez.get(), &cm), [&](const absl::Status& s) {
    status = s;
    done.Notify();
  });
  ASSERT_TRUE(rendez->Send(ClientKey("in"), {}, Tensor::Scalar<int64_t>(41), false).ok());
  done.WaitForNotification();
  ASSERT_TRUE(status.ok()) << status;
  Tensor v;
  bool dead;
  ASSERT_TRUE(rendez->Recv(ClientKey("out"), {}, &v, &dead).ok());
  EXPECT_EQ(v.scalar<int64_t>(), 42);
}

TEST_F(ExecutorTest, DeadValuesPropagateWithoutRunningKernels) {
  GraphDef g;
  AddRecv(&g, "recv", "in");
  AddNode(&g, "f", "TestFail", {"recv"});  // would fail if it ran
  AddSend(&g, "send", "f", "out");
  auto exec = Build(g);
  ASSERT_TRUE(exec.ok()) << exec.status();
  RefPtr<Rendezvous> rendez = NewRendezvous();
  CancellationManager cm;
  ASSERT_TRUE(rendez->Send(ClientKey("in"), {}, Tensor(), /*is_dead=*/true).ok());
  ASSERT_TRUE((*exec)->Run(MakeArgs(rendez.get(), &cm)).ok());
  Tensor v;
  bool dead = false;
  ASSERT_TRUE(rendez->Recv(ClientKey("out"), {}, &v, &dead).ok());
  EXPECT_TRUE(dead);
}

TEST_F(ExecutorTest, ControlEdgesOrderNodes) {
  GraphDef g;
  AddConst(&g, "c", 0);
  AddNode(&g, "slow", "TestAsyncAddOne", {"c"});
  AddConst(&g, "after", 5)->add_input("^slow");
  AddSend(&g, "send", "after", "out");
  auto exec = Build(g);
  ASSERT_TRUE(exec.ok()) << exec.status();
  RefPtr<Rendezvous> rendez = NewRendezvous();
  CancellationManager cm;
  StepStatsCollector collector;
  ASSERT_TRUE((*exec)->Run(MakeArgs(rendez.get(), &cm, &collector)).ok());
  StepStats stats;
  collector.Finalize(&stats);
  ASSERT_EQ(stats.dev_stats_size(), 1);
  EXPECT_EQ(stats.dev_stats(0).device(), kCpu0);
  int64_t slow_end = -1, after_start = -1;
  for (const NodeExecStats& n : stats.dev_stats(0).node_stats()) {
    if (n.node_name() == "slow") slow_end = n.all_start_nanos() + n.op_end_rel_nanos();
    if (n.node_name() == "after") after_start = n.all_start_nanos() + n.op_start_rel_nanos();
    EXPECT_LE(n.op_start_rel_nanos(), n.op_end_rel_nanos());
    EXPECT_LE(n.op_end_rel_nanos(), n.all_end_rel_nanos());
    EXPECT_GT(n.thread_id(), 0u);
  }
  ASSERT_GE(slow_end, 0);
  ASSERT_GE(after_start, 0);
  EXPECT_LE(slow_end, after_start);
  EXPECT_EQ(stats.dev_stats(0).node_stats_size(), 4);
}

TEST_F(ExecutorTest, ErrorNamesTheFailingNodeAndStopsTheStep) {
  GraphDef g;
  AddConst(&g, "c", 0);
  AddOne(&g, "a", "c");
  AddNode(&g, "middle", "TestFail", {"a"});
  AddOne(&g, "b", "middle");
  AddSend(&g, "send", "b", "out");
  auto exec = Build(g);
  ASSERT_TRUE(exec.ok()) << exec.status();
  RefPtr<Rendezvous> rendez = NewRendezvous();
  CancellationManager cm;
  absl::Status s = (*exec)->Run(MakeArgs(rendez.get(), &cm));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_EQ(s.message(), "node 'middle' (TestFail): boom");
  EXPECT_TRUE(cm.IsCancelled());
  // The rendezvous is aborted with the same error.
  Tensor v;
  bool dead;
  absl::Status recv = rendez->Recv(ClientKey("out"), {}, &v, &dead);
  EXPECT_EQ(recv, s);
}

TEST_F(ExecutorTest, CancellationReleasesBlockedKernels) {
  GraphDef g;
  AddConst(&g, "c", 0);
  AddNode(&g, "block", "TestBlock", {"c"});
  AddRecv(&g, "recv", "never_sent");
  AddNode(&g, "d", "TestAdd", {"block", "recv"});
  AddSend(&g, "send", "d", "out");
  auto exec = Build(g);
  ASSERT_TRUE(exec.ok()) << exec.status();
  RefPtr<Rendezvous> rendez = NewRendezvous();
  CancellationManager cm;
  absl::Notification done;
  absl::Status status;
  (*exec)->RunAsync(MakeArgs(rendez.get(), &cm), [&](const absl::Status& s) {
    status = s;
    done.Notify();
  });
  EXPECT_FALSE(done.WaitForNotificationWithTimeout(absl::Milliseconds(20)));
  cm.StartCancel();
  done.WaitForNotification();
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
}

TEST_F(ExecutorTest, CancelledBeforeStart) {
  GraphDef g;
  AddConst(&g, "c", 0);
  AddSend(&g, "send", "c", "out");
  auto exec = Build(g);
  ASSERT_TRUE(exec.ok());
  RefPtr<Rendezvous> rendez = NewRendezvous();
  CancellationManager cm;
  cm.StartCancel();
  EXPECT_TRUE(absl::IsCancelled((*exec)->Run(MakeArgs(rendez.get(), &cm))));
}

TEST_F(ExecutorTest, FirstErrorAbortsTheOtherExecutorsOfTheStep) {
  // Executor 1 waits for a tensor executor 2 would send after a failing node.
  GraphDef g1;
  AddRecv(&g1, "recv", "edge");
  AddOne(&g1, "a", "recv");
  AddSend(&g1, "send", "a", "out");
  GraphDef g2;
  AddConst(&g2, "c", 0);
  AddNode(&g2, "bad", "TestFail", {"c"});
  AddSend(&g2, "send_edge", "bad", "edge");
  auto e1 = Build(g1);
  auto e2 = Build(g2);
  ASSERT_TRUE(e1.ok() && e2.ok());
  for (int round = 0; round < 20; ++round) {
    RefPtr<Rendezvous> rendez = NewRendezvous();
    CancellationManager cm;
    absl::Notification done;
    absl::Status status;
    auto* barrier = new ExecutorBarrier(2, [&](const absl::Status& s) {
      status = s;
      done.Notify();
    });
    (*e1)->RunAsync(MakeArgs(rendez.get(), &cm), barrier->Get());
    (*e2)->RunAsync(MakeArgs(rendez.get(), &cm), barrier->Get());
    done.WaitForNotification();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
    EXPECT_EQ(status.message(), "node 'bad' (TestFail): boom");
  }
}

TEST_F(ExecutorTest, BarrierPrefersTheCauseOverCancellation) {
  absl::Status result;
  auto* barrier = new ExecutorBarrier(3, [&](const absl::Status& s) { result = s; });
  auto a = barrier->Get(), b = barrier->Get(), c = barrier->Get();
  a(errors::Cancelled("echo"));
  b(errors::InvalidArgument("cause"));
  c(errors::Internal("later"));
  EXPECT_TRUE(absl::IsInvalidArgument(result)) << result;
}

TEST_F(ExecutorTest, ConcurrentStepsShareOneExecutor) {
  GraphDef g;
  AddRecv(&g, "recv", "in");
  AddOne(&g, "a", "recv", /*expensive=*/true);
  AddOne(&g, "b", "recv");
  AddNode(&g, "d", "TestAdd", {"a", "b"});
  AddSend(&g, "send", "d", "out");
  auto exec = Build(g);
  ASSERT_TRUE(exec.ok()) << exec.status();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        RefPtr<Rendezvous> rendez = NewRendezvous();
        CancellationManager cm;
        const int64_t x = t * 1000 + i;
        if (!rendez->Send(ClientKey("in"), {}, Tensor::Scalar<int64_t>(x), false).ok()) ++failures;
        Executor::Args args;
        args.rendezvous = rendez.get();
        args.cancellation_manager = &cm;
        args.runner = [this](Executor::Closure c) { pool_.Schedule(std::move(c)); };
        if (!(*exec)->Run(args).ok()) ++failures;
        Tensor v;
        bool dead;
        if (!rendez->Recv(ClientKey("out"), {}, &v, &dead).ok() ||
            v.scalar<int64_t>() != 2 * x + 2) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(ExecutorTest, BuildErrorsNameTheNode) {
  {
    GraphDef g;
    AddConst(&g, "c", 0);
    NodeDef* n = AddNode(&g, "bad_send", "_Send", {"c"});
    AddNodeAttr("T", DT_INT64, n);
    AddNodeAttr("tensor_name", "x", n);
    AddNodeAttr("send_device", "not a device", n);
    AddNodeAttr("recv_device", kCpu0, n);
    AddNodeAttr("send_device_incarnation", int64_t{1}, n);
    auto exec = Build(g);
    ASSERT_FALSE(exec.ok());
    EXPECT_THAT(std::string(exec.status().message()), HasSubstr("bad_send"));
  }
}

// The cost estimate that decides inline or hand-off: a preempted run of a
// cheap kernel moves it little and the next clean run takes it back; a
// kernel that really got dearer gets there within a few samples.
TEST(FoldCostSampleTest, DiscountsLongOutliersAndTracksRealCost) {
  using executor_internal::FoldCostSample;
  using executor_internal::kUnmeasured;
  constexpr int64_t kFloor = 1000;
  EXPECT_EQ(FoldCostSample(kUnmeasured, 5000, kFloor), 5000);
  // The first run was slow (cold caches); clean runs of 300 ns take the
  // estimate under the floor in three samples.
  int64_t cost = 5000;
  for (int i = 0; i < 3; ++i) cost = FoldCostSample(cost, 300, kFloor);
  EXPECT_EQ(cost, 888);
  // One run of 30 us (the thread lost its core) adds an eighth of the cap.
  cost = FoldCostSample(300, 30000, kFloor);
  EXPECT_EQ(cost, 300 + (4 * 300 + kFloor - 300) / 8);
  EXPECT_LT(cost, kFloor);
  EXPECT_EQ(FoldCostSample(cost, 300, kFloor), 300 + (cost - 300 + 1) / 2);
  // A kernel that now takes 50 us every time is past the floor in 3 samples
  // and within 10% of its cost in 30.
  cost = 300;
  int samples = 0;
  while (cost < kFloor) cost = FoldCostSample(cost, 50000, kFloor), ++samples;
  EXPECT_EQ(samples, 3);
  for (; samples < 30; ++samples) cost = FoldCostSample(cost, 50000, kFloor);
  EXPECT_GT(cost, 45000);
}

}  // namespace
}  // namespace distflow
