// Where a parameter-server job computes: one coordinator closure of the
// Fashion-MNIST MLP's training step (forward pass, loss, gradients, Adam
// update) on one ps and two workers, all real `distflow server` processes.
// The step stats of the closure must show the arithmetic on the worker that
// ran it and nothing but variable ops on the ps; a per-worker dataset's
// iterator must live on its own worker.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/cc/dataset.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/training/adam.h"
#include "distflow/coordinator/cluster_coordinator.h"
#include "distflow/coordinator/parameter_server_strategy.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "fashion_mnist/model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server_process.h"

namespace distflow {
namespace {

constexpr int kBatch = 8;
constexpr char kPsDevice[] = "/job:ps/replica:0/task:0/device:CPU:0";

// The ops a parameter server may run for a training step: the variables'
// own ops, and the transfers and control-edge stand-ins the partitioner adds.
const std::set<std::string>& PsOps() {
  static const auto* ops = new std::set<std::string>{"VarHandleOp",
                                                     "ReadVariableOp",
                                                     "AssignVariableOp",
                                                     "AssignAddVariableOp",
                                                     "AssignSubVariableOp",
                                                     "ResourceApplyAdam",
                                                     "_Send",
                                                     "_Recv"};
  return *ops;
}

std::string WorkerDevice(int task) {
  return absl::StrCat("/job:worker/replica:0/task:", task, "/device:CPU:0");
}

// Node name -> (op, device it ran on), from one run's step stats.
struct RanNode {
  std::string op;
  std::string device;
};

class PlacementProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    servers_ = LocalPsCluster::Start(2);
    ASSERT_TRUE(servers_.ok());
    auto spec = ClusterSpec::FromFlag(servers_.Flag());
    ASSERT_TRUE(spec.ok()) << spec.status();
    cluster_ = spec->def();
  }

  // Runs `fn` on worker 0 outside the queue, retrying while the workers are
  // still connecting.
  absl::StatusOr<std::vector<Tensor>> RunOnWorker0(ClusterCoordinator* coord,
                                                   ClusterCoordinator::FunctionId fn) {
    absl::StatusOr<std::vector<Tensor>> r;
    for (int i = 0; i < 50; ++i) {
      r = coord->RunOnWorker(fn, 0, {});
      if (r.ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return r;
  }

  LocalPsCluster servers_;
  ClusterDef cluster_;
};

TEST_F(PlacementProcessTest, MlpStepComputesOnItsWorkerAndOnlyTouchesVariablesOnThePs) {
  absl::StatusOr<ParameterServerStrategy> strategy =
      ParameterServerStrategy::FromClusterDef(cluster_);
  ASSERT_TRUE(strategy.ok()) << strategy.status();

  // The graph as distflow train builds it: variables (and the optimizer's)
  // under the strategy's variable scope, the step itself unplaced.
  Scope root = Scope::NewRootScope();
  const Scope vars = strategy->VariableScope(root);
  auto model = fashion_mnist::MakeClassifier(vars, "mlp", /*seed=*/1);
  ASSERT_TRUE(model.ok()) << model.status();
  AdamOptimizer adam(vars, 0.001);
  const Scope step = root.NewSubScope("train");
  const Output images = ops::Placeholder(step.WithOpName("images"), DT_FLOAT,
                                         ops::Placeholder::Shape(PartialTensorShape({-1, 784})));
  const Output labels = ops::Placeholder(step.WithOpName("labels"), DT_INT32,
                                         ops::Placeholder::Shape(PartialTensorShape({-1})));
  const Output logits = (*model)->Logits(step, images);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(step, logits, labels);
  const Output loss = ops::Mean(step.WithOpName("loss"), xent.loss, {0});
  auto grads = adam.ComputeGradients(loss, (*model)->variables());
  ASSERT_TRUE(grads.ok()) << grads.status();
  auto train_op = adam.ApplyGradients(*grads);
  ASSERT_TRUE(train_op.ok()) << train_op.status();
  std::vector<Operation> inits;
  for (const Variable& v : (*model)->variables()) inits.push_back(v.initializer());
  for (const Operation& op : adam.initializers()) inits.push_back(op);
  ops::NoOp init(root.WithOpName("init").WithControlDependencies(inits));

  // A per-worker dataset whose iterator the step reads.
  const Scope data = root.NewSubScope("data");
  DatasetIterator iterator = Dataset::Range(data, 0, 1000).Repeat().MakeIterator("it");
  const Output iterator_string = ops::IteratorToStringHandle(data, iterator.handle);
  ASSERT_TRUE(root.status().ok()) << root.status();

  GraphDef graph;
  ASSERT_TRUE(root.ToGraphDef(&graph).ok());
  std::map<std::string, std::string> op_of;
  // Nodes the optimizer colocates with a variable, as TensorFlow's
  // optimizers do: the scalar constants of each apply op and Adam's
  // beta-power updates.
  std::set<std::string> colocated;
  for (const NodeDef& n : graph.node()) {
    op_of[n.name()] = n.op();
    if (n.attr().count("_class") > 0) colocated.insert(n.name());
  }

  absl::Mutex mu;
  std::vector<std::pair<int, RunMetadata>> traces;
  CoordinatorOptions options = strategy->MakeCoordinatorOptions();
  options.call_timeout = absl::Seconds(20);
  options.run_options.set_trace_level(RunOptions::FULL_TRACE);
  options.on_run_metadata = [&](int task, const RunMetadata& m) {
    absl::MutexLock l(&mu);
    traces.emplace_back(task, m);
  };
  auto coord = ClusterCoordinator::Create(std::move(options));
  ASSERT_TRUE(coord.ok()) << coord.status();
  auto setup = (*coord)->RegisterFunction({graph, {}, {}, {"init"}});
  ASSERT_TRUE(setup.ok()) << setup.status();
  auto fn = (*coord)->RegisterFunction(
      {GraphDef(), {images.name(), labels.name()}, {loss.name()}, {train_op->node()->name()}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto dataset_fn = (*coord)->RegisterFunction({GraphDef(), {}, {iterator_string.name()}, {}});
  ASSERT_TRUE(dataset_fn.ok()) << dataset_fn.status();
  absl::StatusOr<std::vector<Tensor>> initialized = RunOnWorker0(coord->get(), *setup);
  ASSERT_TRUE(initialized.ok()) << initialized.status();
  {
    absl::MutexLock l(&mu);
    traces.clear();
  }

  Tensor x(DT_FLOAT, TensorShape({kBatch, 784}));
  Tensor y(DT_INT32, TensorShape({kBatch}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = (i % 7) * 0.1f;
  for (int i = 0; i < kBatch; ++i) y.flat<int32_t>()[i] = i % 10;
  absl::StatusOr<RemoteValue> value = (*coord)->Schedule(*fn, {x, y});
  ASSERT_TRUE(value.ok()) << value.status();
  ASSERT_TRUE((*coord)->Join(absl::Seconds(60)).ok());
  absl::StatusOr<std::vector<Tensor>> fetched = value->Fetch(absl::Seconds(1));
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  const float loss_value = (*fetched)[0].flat<float>()[0];
  EXPECT_GT(loss_value, 0.0f);  // cross-entropy of 10 classes from random weights
  EXPECT_LT(loss_value, 20.0f);

  int task = -1;
  std::map<std::string, RanNode> ran;
  {
    absl::MutexLock l(&mu);
    ASSERT_EQ(traces.size(), 1u);
    task = traces[0].first;
    for (const DeviceStepStats& dev : traces[0].second.step_stats().dev_stats()) {
      for (const NodeExecStats& n : dev.node_stats()) {
        auto it = op_of.find(n.node_name());
        ran[n.node_name()] = {it == op_of.end() ? "" : it->second, dev.device()};
      }
    }
  }
  ASSERT_GE(task, 0);
  const std::string worker = WorkerDevice(task);

  // The arithmetic: forward pass, loss and gradients on the closure's worker.
  std::map<std::string, int> on_worker;
  for (const auto& [name, node] : ran) {
    if (node.device == worker) ++on_worker[node.op];
  }
  for (const char* op : {"MatMul", "BiasAdd", "Relu", "SparseSoftmaxCrossEntropyWithLogits", "Mean",
                         "ReluGrad", "BiasAddGrad"}) {
    EXPECT_GT(on_worker[op], 0) << op << " did not run on " << worker;
  }
  int gradient_nodes = 0;
  for (const auto& [name, node] : ran) {
    if (!absl::StartsWith(name, "gradients/") || node.op.empty()) continue;
    ++gradient_nodes;
    EXPECT_EQ(node.device, worker) << name << " (" << node.op << ")";
  }
  EXPECT_GT(gradient_nodes, 10);

  // The ps: the variables' reads and Adam's applies, and the scalars the
  // optimizer colocates with them, nothing else. Nodes the partitioner made
  // (not in the client's graph) are transfers or the tiny stand-ins of
  // control edges.
  int reads = 0, applies = 0, colocated_on_ps = 0;
  for (const auto& [name, node] : ran) {
    if (node.device != kPsDevice) {
      EXPECT_TRUE(absl::StartsWith(node.device, "/job:worker/"))
          << name << " ran on " << node.device;
      continue;
    }
    if (node.op.empty()) continue;  // made by the partitioner
    if (PsOps().count(node.op) == 0) {
      EXPECT_TRUE(colocated.count(name) > 0) << name << " (" << node.op << ") ran on the ps";
      EXPECT_THAT(node.op, ::testing::AnyOf("Const", "Mul")) << name;
      ++colocated_on_ps;
    }
    reads += node.op == "ReadVariableOp";
    applies += node.op == "ResourceApplyAdam";
  }
  EXPECT_EQ(applies, 4);  // two weights and two biases
  EXPECT_GE(reads, 4);
  // lr, beta1, beta2 and epsilon of each apply; beta1 and beta2 with their
  // powers' updates (two Mul).
  EXPECT_EQ(colocated_on_ps, 4 * 4 + 2 * 2);

  // A per-worker dataset's iterator lives on the worker that made it.
  auto iterators = (*coord)->CreatePerWorkerDataset(*dataset_fn);
  ASSERT_TRUE(iterators.ok()) << iterators.status();
  {
    absl::MutexLock l(&mu);
    ASSERT_FALSE(traces.empty());
    for (const auto& [t, metadata] : traces) {
      for (const DeviceStepStats& dev : metadata.step_stats().dev_stats()) {
        for (const NodeExecStats& n : dev.node_stats()) {
          if (!absl::StartsWith(n.node_name(), "data/")) continue;
          EXPECT_EQ(dev.device(), WorkerDevice(t)) << n.node_name();
        }
      }
    }
  }
}

}  // namespace
}  // namespace distflow
