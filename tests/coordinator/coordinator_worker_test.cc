// One CoordinatorWorker driven alone through a WorkerHost of the test's own
// (no ClusterCoordinator): it takes closures from the host's queue, runs
// them on a worker server in this process, and reports through the host's
// counters and queue — what the narrow interface promises.
#include "distflow/coordinator/coordinator_worker.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/coordinator/closure.h"
#include "distflow/coordinator/worker_host.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_server.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// y = x + 1, and `bad` = x reshaped to [2], which fails for a scalar x (an
// error of the function's own).
constexpr char kGraph[] = R"pb(
  node {
    name: "x"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value { shape { unknown_rank: true } }
    }
  }
  node {
    name: "one"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape {}
          float_val: 1
        }
      }
    }
  }
  node {
    name: "y"
    op: "AddV2"
    input: "x"
    input: "one"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "two"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_INT32 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT32
          tensor_shape { dim { size: 1 } }
          int_val: 2
        }
      }
    }
  }
  node {
    name: "bad"
    op: "Reshape"
    input: "x"
    input: "two"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
    attr {
      key: "Tshape"
      value { type: DT_INT32 }
    }
  }
)pb";

// The host a test drives a worker with: the options, queue and counters a
// coordinator would hold, and one registered function.
class TestHost : public WorkerHost {
 public:
  explicit TestHost(CoordinatorOptions options, const char* graph = kGraph)
      : options_(std::move(options)), queue_(64) {
    auto f = std::make_shared<RegisteredFunction>();
    f->id = 0;
    EXPECT_TRUE(ParseGraphDefText(graph, &f->spec.graph).ok());
    f->spec.args = {"x"};
    f->spec.results = {"y"};
    functions_.push_back(f);
    auto bad = std::make_shared<RegisteredFunction>();
    bad->id = 1;
    bad->spec.args = {"x"};
    bad->spec.results = {"bad"};
    functions_.push_back(bad);
  }
  ~TestHost() override { queue_.Stop(); }

  const CoordinatorOptions& options() const override { return options_; }
  ClosureQueue& queue() override { return queue_; }
  CoordinatorTally& tally() override { return tally_; }
  std::shared_ptr<const RegisteredFunction> function(int id) const override {
    return id >= 0 && static_cast<size_t>(id) < functions_.size() ? functions_[id] : nullptr;
  }
  std::vector<std::shared_ptr<const RegisteredFunction>> functions() const override {
    return functions_;
  }
  std::vector<std::shared_ptr<PerWorkerResource>> resources() const override { return {}; }
  ClusterDef ClusterFor(int, const std::string&) const override { return options_.cluster; }
  void FailIfEveryWorkerLost() override {}
  bool ps_recovery_on() const override { return false; }
  int64_t ps_generation() const override { return 0; }
  absl::StatusOr<PsProbe> RecoverPs(int, int64_t, const absl::Status&) override {
    return errors::FailedPrecondition("no ps recovery in this test");
  }
  bool ReportPsFailure(int) override { return false; }
  int ps_failure_threshold() const override { return 3; }

 private:
  const CoordinatorOptions options_;
  ClosureQueue queue_;
  CoordinatorTally tally_;
  std::vector<std::shared_ptr<const RegisteredFunction>> functions_;
};

class CoordinatorWorkerTest : public ::testing::Test {
 protected:
  // Starts ps task 0 and worker task 0 in this process, each on a port of
  // its own choosing; the options name them.
  CoordinatorOptions StartServers() {
    std::vector<std::string> addresses;
    for (const char* job : {"ps", "worker"}) {
      absl::StatusOr<ServerDef> def = MakeServerDef(absl::StrCat(job, "=127.0.0.1:0"), job, 0);
      EXPECT_TRUE(def.ok()) << def.status();
      absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Create(*def);
      EXPECT_TRUE(server.ok()) << server.status();
      EXPECT_TRUE((*server)->Start().ok());
      addresses.push_back(absl::StrCat("127.0.0.1:", (*server)->bound_port()));
      servers_.push_back(*std::move(server));
    }
    worker_address_ = addresses[1];
    CoordinatorOptions o;
    o.cluster = MakeServerDef(absl::StrCat("ps=", addresses[0], ";worker=", addresses[1]), "ps", 0)
                    ->cluster();
    o.call_timeout = absl::Seconds(20);
    o.max_inflight_closures = 2;
    return o;
  }

  // A closure running function `fn` with x = `x` on `worker`.
  static std::shared_ptr<Closure> Call(CoordinatorWorker* worker, int fn, float x) {
    return std::make_shared<Closure>([worker, fn, x](const ClosureContext&) {
      Tensor t(DT_FLOAT, TensorShape({}));
      t.scalar<float>() = x;
      return worker->Run(fn, {t});
    });
  }

  std::string worker_address_;
  std::vector<std::unique_ptr<GrpcServer>> servers_;
};

TEST_F(CoordinatorWorkerTest, RunsTheClosuresOfItsHostsQueueAndCountsThem) {
  TestHost host(StartServers());
  CoordinatorWorker worker(&host, 0, worker_address_, WorkerOrigin::kCluster);
  worker.Start();
  std::vector<RemoteValue> values;
  for (int i = 0; i < 10; ++i) {
    std::shared_ptr<Closure> c = Call(&worker, 0, static_cast<float>(i));
    values.push_back(c->output());
    ASSERT_TRUE(host.queue().Put(std::move(c), absl::Seconds(10)).ok());
  }
  ASSERT_TRUE(host.queue().Wait(absl::Seconds(60)).ok());
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<std::vector<Tensor>> y = values[i].Fetch(absl::Seconds(1));
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ((*y)[0].scalar<float>(), i + 1.0f);
  }
  EXPECT_EQ(host.tally().done.load(), 10);
  EXPECT_EQ(host.tally().retried.load(), 0);
  EXPECT_EQ(worker.state().closures_done, 10);
  EXPECT_TRUE(worker.up());
  worker.Stop();
}

TEST_F(CoordinatorWorkerTest, AFunctionsOwnErrorFailsItsClosureOnceThroughTheHost) {
  TestHost host(StartServers());
  CoordinatorWorker worker(&host, 0, worker_address_, WorkerOrigin::kCluster);
  worker.Start();
  std::shared_ptr<Closure> c = Call(&worker, 1, 5);
  RemoteValue value = c->output();
  ASSERT_TRUE(host.queue().Put(std::move(c), absl::Seconds(10)).ok());
  absl::Status joined = host.queue().Wait(absl::Seconds(60));
  EXPECT_EQ(joined.code(), absl::StatusCode::kInvalidArgument) << joined;
  EXPECT_THAT(joined.message(), HasSubstr("reshape"));
  EXPECT_EQ(value.Fetch(absl::Seconds(1)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(host.tally().failed.load(), 1);
  EXPECT_EQ(host.tally().done.load(), 0);
  // A function's error is not the worker's: it stays up.
  EXPECT_TRUE(worker.up());
  EXPECT_EQ(worker.state().failures, 0);
  worker.Stop();
}

TEST_F(CoordinatorWorkerTest, AWorkerThatNeverAnswersFailsTheHostsQueueAtTheStartupDeadline) {
  CoordinatorOptions o = StartServers();
  o.startup_deadline = absl::Milliseconds(500);
  o.recovery_backoff_min = absl::Milliseconds(20);
  o.recovery_backoff_max = absl::Milliseconds(50);
  TestHost host(std::move(o));
  // A port nothing listens on: the ps server's, once it is gone.
  const std::string nobody = absl::StrCat("127.0.0.1:", servers_[0]->bound_port());
  servers_[0]->Stop();
  servers_[0].reset();
  CoordinatorWorker worker(&host, 0, nobody, WorkerOrigin::kCluster);
  worker.Start();
  // The worker never takes the closure; the startup failure ends it.
  std::shared_ptr<Closure> c = Call(&worker, 0, 1);
  ASSERT_TRUE(host.queue().Put(std::move(c), absl::Seconds(10)).ok());
  absl::Status joined = host.queue().Wait(absl::Seconds(30));
  EXPECT_EQ(joined.code(), absl::StatusCode::kUnavailable) << joined;
  EXPECT_THAT(joined.message(), HasSubstr(nobody));
  EXPECT_THAT(joined.message(), HasSubstr("never answered within the startup deadline"));
  EXPECT_FALSE(worker.up());
  worker.Stop();
}

TEST_F(CoordinatorWorkerTest, AFunctionTheWorkerRefusesFailsTheJobWithoutWaiting) {
  constexpr char kUnknownOp[] = R"pb(
    node {
      name: "x"
      op: "Placeholder"
      attr {
        key: "dtype"
        value { type: DT_FLOAT }
      }
    }
    node { name: "y" op: "NoSuchOpAnywhere" input: "x" }
  )pb";
  TestHost host(StartServers(), kUnknownOp);
  CoordinatorWorker worker(&host, 0, worker_address_, WorkerOrigin::kCluster);
  worker.Start();
  ASSERT_TRUE(host.queue().Put(Call(&worker, 0, 1), absl::Seconds(10)).ok());
  // Well inside the startup deadline (60 s) the job would otherwise wait.
  absl::Status joined = host.queue().Wait(absl::Seconds(30));
  EXPECT_EQ(joined.code(), absl::StatusCode::kUnimplemented) << joined;
  EXPECT_THAT(joined.message(), HasSubstr("refuses a registered function"));
  EXPECT_THAT(joined.message(), HasSubstr("NoSuchOpAnywhere"));
  worker.Stop();
}

}  // namespace
}  // namespace distflow
