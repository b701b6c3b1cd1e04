// State through DirectSession: resource and ref variables persisting across
// Runs, ref edges read by value consumers, a small SGD training loop, queues
// shared by concurrent Runs (a blocked dequeue released by another Run, a
// dequeue cut short by the step timeout), the synchronous-replica pattern of
// accumulators, and checkpoints saved and restored through the graph,
// including a failed restore that leaves every variable as it was.
#include <cmath>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "distflow/common_runtime/session.h"
#include "distflow/core/env.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/tensor_bundle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_ops.h"

namespace distflow {
namespace {

using test::AddNode;
using test::AddPlaceholder;
using ::testing::HasSubstr;

std::unique_ptr<Session> MakeSession(int num_devices = 1) {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = num_devices;
  options.config.set_inter_op_parallelism_threads(4);
  options.config.set_intra_op_parallelism_threads(1);
  auto session = NewSession(options);
  EXPECT_TRUE(session.ok()) << session.status();
  return *std::move(session);
}

NodeDef* AddConstTensor(GraphDef* g, const std::string& name, const Tensor& value) {
  NodeDef* n = AddNode(g, name, "Const", {});
  AddNodeAttr("value", value, n);
  AddNodeAttr("dtype", value.dtype(), n);
  return n;
}

Tensor Floats(std::vector<float> v) { return Tensor::FromVector<float>(v); }

std::vector<float> Values(const Tensor& t) {
  auto f = t.flat<float>();
  return std::vector<float>(f.begin(), f.end());
}

NodeDef* AddVarHandle(GraphDef* g, const std::string& name, DataType dtype,
                      const PartialTensorShape& shape) {
  NodeDef* n = AddNode(g, name, "VarHandleOp", {});
  AddNodeAttr("dtype", dtype, n);
  AddNodeAttr("shape", shape, n);
  return n;
}

NodeDef* AddTyped(GraphDef* g, const std::string& name, const std::string& op,
                  const std::vector<std::string>& inputs, const std::string& attr, DataType dtype) {
  NodeDef* n = AddNode(g, name, op, inputs);
  AddNodeAttr(attr, dtype, n);
  return n;
}

// Resource variable w: float[2] with init = [1, 2], add = w += delta.
GraphDef ResourceVariableGraph() {
  GraphDef g;
  AddVarHandle(&g, "w", DT_FLOAT, PartialTensorShape({2}));
  AddConstTensor(&g, "w_init_value", Floats({1, 2}));
  AddTyped(&g, "init", "AssignVariableOp", {"w", "w_init_value"}, "dtype", DT_FLOAT);
  AddTyped(&g, "read", "ReadVariableOp", {"w"}, "dtype", DT_FLOAT);
  AddPlaceholder(&g, "delta", DT_FLOAT, PartialTensorShape({2}));
  AddTyped(&g, "add", "AssignAddVariableOp", {"w", "delta"}, "dtype", DT_FLOAT);
  AddTyped(&g, "wrong", "AssignVariableOp", {"w", "delta"}, "dtype", DT_FLOAT);
  return g;
}

TEST(StateSessionTest, ResourceVariableLivesAcrossRuns) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(ResourceVariableGraph()).ok());
  std::vector<Tensor> out;
  absl::Status s = session->Run({}, {"read"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("Variable 'w'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("uninitialized"));

  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(session->Run({{"delta", Floats({1, 1})}}, {}, {"add"}, &out).ok());
  ASSERT_TRUE(session->Run({{"delta", Floats({1, 1})}}, {}, {"add"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<float>{3, 4}));
  const Tensor fetched = out[0];

  // The value fetched earlier is a snapshot: later updates do not touch it.
  ASSERT_TRUE(session->Run({{"delta", Floats({10, 10})}}, {}, {"add"}, &out).ok());
  EXPECT_EQ(Values(fetched), (std::vector<float>{3, 4}));

  s = session->Run({{"delta", Floats({1, 2, 3})}}, {}, {"add"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(StateSessionTest, AssignOfWrongShapeNamesTheVariableAndShapes) {
  GraphDef g = ResourceVariableGraph();
  AddPlaceholder(&g, "any", DT_FLOAT, PartialTensorShape());
  AddTyped(&g, "assign_any", "AssignVariableOp", {"w", "any"}, "dtype", DT_FLOAT);
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(g).ok());
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"any", Floats({1, 2, 3})}}, {}, {"assign_any"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'w'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("[3]"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("[2]"));
}

// Ref variable v: float[2]; train = ApplyGradientDescent(v, 0.5, g);
// read = Identity(v) reads the current value.
GraphDef RefVariableGraph() {
  GraphDef g;
  NodeDef* v = AddNode(&g, "v", "VariableV2", {});
  AddNodeAttr("dtype", DT_FLOAT, v);
  AddNodeAttr("shape", PartialTensorShape({2}), v);
  AddConstTensor(&g, "v_init_value", Floats({1, 2}));
  AddTyped(&g, "init", "Assign", {"v", "v_init_value"}, "T", DT_FLOAT);
  AddConstTensor(&g, "lr", Tensor::Scalar<float>(0.5f));
  AddPlaceholder(&g, "grad", DT_FLOAT, PartialTensorShape({2}));
  AddTyped(&g, "train", "ApplyGradientDescent", {"v", "lr", "grad"}, "T", DT_FLOAT);
  AddTyped(&g, "read", "Identity", {"v"}, "T", DT_FLOAT);
  AddTyped(&g, "is_init", "IsVariableInitialized", {"v"}, "dtype", DT_FLOAT);
  return g;
}

TEST(StateSessionTest, RefVariableAssignAndGradientDescent) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(RefVariableGraph()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"is_init"}, {}, &out).ok());
  EXPECT_FALSE(out[0].scalar<bool>());
  absl::Status s = session->Run({}, {"read"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("uninitialized value v"));

  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"is_init", "read"}, {}, &out).ok());
  EXPECT_TRUE(out[0].scalar<bool>());
  EXPECT_EQ(Values(out[1]), (std::vector<float>{1, 2}));
  const Tensor before = out[1];

  ASSERT_TRUE(session->Run({{"grad", Floats({2, -2})}}, {}, {"train"}, &out).ok());
  // Fetching the ref output of train and the variable itself gives values.
  s = session->Run({{"grad", Floats({2, -2})}}, {"train"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Values(out[0]), (std::vector<float>{-1, 4}));
  ASSERT_TRUE(session->Run({}, {"v", "read"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<float>{-1, 4}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{-1, 4}));
  EXPECT_EQ(Values(before), (std::vector<float>{1, 2}));
}

TEST(StateSessionTest, RefVariableOnAnotherDevice) {
  GraphDef g = RefVariableGraph();
  for (NodeDef& n : *g.mutable_node()) {
    if (n.name() == "read") n.set_device("/device:CPU:1");
  }
  auto session = MakeSession(2);
  ASSERT_TRUE(session->Create(g).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(session->Run({{"grad", Floats({2, 2})}}, {}, {"train"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<float>{0, 1}));
}

// Linear regression y = 2x + 10 by SGD on resource variables, with the
// gradients of the squared error written out by hand.
TEST(StateSessionTest, LinearRegressionTrains) {
  GraphDef g;
  AddVarHandle(&g, "weight", DT_FLOAT, PartialTensorShape({}));
  AddVarHandle(&g, "bias", DT_FLOAT, PartialTensorShape({}));
  AddConstTensor(&g, "zero", Tensor::Scalar<float>(0));
  AddTyped(&g, "init_w", "AssignVariableOp", {"weight", "zero"}, "dtype", DT_FLOAT);
  AddTyped(&g, "init_b", "AssignVariableOp", {"bias", "zero"}, "dtype", DT_FLOAT);
  AddPlaceholder(&g, "x", DT_FLOAT, PartialTensorShape({}));
  AddPlaceholder(&g, "y", DT_FLOAT, PartialTensorShape({}));
  AddTyped(&g, "w", "ReadVariableOp", {"weight"}, "dtype", DT_FLOAT);
  AddTyped(&g, "b", "ReadVariableOp", {"bias"}, "dtype", DT_FLOAT);
  AddTyped(&g, "wx", "Mul", {"w", "x"}, "T", DT_FLOAT);
  AddTyped(&g, "pred", "AddV2", {"wx", "b"}, "T", DT_FLOAT);
  AddTyped(&g, "err", "Sub", {"pred", "y"}, "T", DT_FLOAT);
  AddTyped(&g, "loss", "Mul", {"err", "err"}, "T", DT_FLOAT);
  AddConstTensor(&g, "two", Tensor::Scalar<float>(2));
  AddTyped(&g, "grad_b", "Mul", {"two", "err"}, "T", DT_FLOAT);
  AddTyped(&g, "grad_w", "Mul", {"grad_b", "x"}, "T", DT_FLOAT);
  AddConstTensor(&g, "lr", Tensor::Scalar<float>(0.05f));
  AddTyped(&g, "train_w", "ResourceApplyGradientDescent", {"weight", "lr", "grad_w"}, "T",
           DT_FLOAT);
  AddTyped(&g, "train_b", "ResourceApplyGradientDescent", {"bias", "lr", "grad_b"}, "T", DT_FLOAT);
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(g).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init_w", "init_b"}, &out).ok());
  const float xs[] = {-1.5f, -0.5f, 0.5f, 1.5f};
  float loss = 0;
  for (int step = 0; step < 400; ++step) {
    const float x = xs[step % 4];
    ASSERT_TRUE(
        session
            ->Run({{"x", Tensor::Scalar<float>(x)}, {"y", Tensor::Scalar<float>(2 * x + 10)}},
                  {"loss"}, {"train_w", "train_b"}, &out)
            .ok());
    loss = out[0].scalar<float>();
  }
  EXPECT_LT(loss, 1e-3);
  ASSERT_TRUE(session->Run({}, {"w", "b"}, {}, &out).ok());
  EXPECT_NEAR(out[0].scalar<float>(), 2, 1e-2);
  EXPECT_NEAR(out[1].scalar<float>(), 10, 1e-2);
}

// A float-scalar queue q with enqueue(x), dequeue and close.
GraphDef QueueGraph() {
  GraphDef g;
  NodeDef* q = AddNode(&g, "q", "FIFOQueueV2", {});
  AddNodeAttr("component_types", DataTypeVector{DT_FLOAT}, q);
  AddNodeAttr("shapes", std::vector<PartialTensorShape>{PartialTensorShape({})}, q);
  AddNodeAttr("capacity", int64_t{2}, q);
  AddPlaceholder(&g, "x", DT_FLOAT, PartialTensorShape({}));
  NodeDef* enq = AddNode(&g, "enqueue", "QueueEnqueueV2", {"q", "x"});
  AddNodeAttr("Tcomponents", DataTypeVector{DT_FLOAT}, enq);
  NodeDef* deq = AddNode(&g, "dequeue", "QueueDequeueV2", {"q"});
  AddNodeAttr("component_types", DataTypeVector{DT_FLOAT}, deq);
  AddNode(&g, "close", "QueueCloseV2", {"q"});
  AddNode(&g, "size", "QueueSizeV2", {"q"});
  return g;
}

TEST(StateSessionTest, BlockedDequeueIsReleasedByAnotherRun) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(QueueGraph()).ok());
  absl::Notification dequeued;
  absl::Status dequeue_status;
  std::vector<Tensor> dequeue_out;
  std::thread consumer([&] {
    dequeue_status = session->Run({}, {"dequeue"}, {}, &dequeue_out);
    dequeued.Notify();
  });
  EXPECT_FALSE(dequeued.WaitForNotificationWithTimeout(absl::Milliseconds(100)));
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Tensor::Scalar<float>(4.5f)}}, {}, {"enqueue"}, &out).ok());
  EXPECT_TRUE(dequeued.WaitForNotificationWithTimeout(absl::Seconds(10)));
  consumer.join();
  ASSERT_TRUE(dequeue_status.ok()) << dequeue_status;
  EXPECT_EQ(dequeue_out[0].scalar<float>(), 4.5f);
}

TEST(StateSessionTest, CancelRunningStepsEndsABlockedStepAndTheSessionGoesOn) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(QueueGraph()).ok());
  absl::Notification dequeued;
  absl::Status dequeue_status;
  std::thread consumer([&] {
    std::vector<Tensor> out;
    dequeue_status = session->Run({}, {"dequeue"}, {}, &out);
    dequeued.Notify();
  });
  // Cancel until the step has started and ended (a cancel before it
  // started leaves it running).
  while (!dequeued.WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
    ASSERT_TRUE(session->CancelRunningSteps().ok());
  }
  consumer.join();
  EXPECT_EQ(dequeue_status.code(), absl::StatusCode::kCancelled) << dequeue_status;
  // Later steps run as usual; the cancelled dequeue took nothing.
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Tensor::Scalar<float>(2)}}, {}, {"enqueue"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"dequeue"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 2);
  ASSERT_TRUE(session->Close().ok());
  EXPECT_EQ(session->CancelRunningSteps().code(), absl::StatusCode::kCancelled);
}

TEST(StateSessionTest, DequeueEndsAtTheStepTimeout) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(QueueGraph()).ok());
  RunOptions options;
  options.set_timeout_in_ms(100);
  std::vector<Tensor> out;
  const int64_t start = NowMicros();
  absl::Status s = session->Run(options, {}, {"dequeue"}, {}, &out, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(NowMicros() - start, 5'000'000);
  // The cancelled dequeue took nothing: the next element is still there.
  ASSERT_TRUE(session->Run({{"x", Tensor::Scalar<float>(1)}}, {}, {"enqueue"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"size"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 1);
  ASSERT_TRUE(session->Run({}, {"dequeue"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 1);
}

TEST(StateSessionTest, FullQueueEnqueueEndsAtTheStepTimeout) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(QueueGraph()).ok());
  std::vector<Tensor> out;
  for (float v : {1.0f, 2.0f}) {
    ASSERT_TRUE(session->Run({{"x", Tensor::Scalar<float>(v)}}, {}, {"enqueue"}, &out).ok());
  }
  RunOptions options;
  options.set_timeout_in_ms(100);
  absl::Status s =
      session->Run(options, {{"x", Tensor::Scalar<float>(3)}}, {}, {"enqueue"}, &out, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  ASSERT_TRUE(session->Run({}, {"size"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 2);
}

TEST(StateSessionTest, ClosedEmptyQueueIsOutOfRange) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(QueueGraph()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Tensor::Scalar<float>(1)}}, {}, {"enqueue"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {}, {"close"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"dequeue"}, {}, &out).ok());
  absl::Status s = session->Run({}, {"dequeue"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
  s = session->Run({{"x", Tensor::Scalar<float>(1)}}, {}, {"enqueue"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
}

// Two replicas push gradients to an accumulator; the chief's update takes
// their mean (waiting for both) and applies it, as SyncReplicasOptimizer does.
TEST(StateSessionTest, SyncReplicasAggregateGradients) {
  GraphDef g;
  AddVarHandle(&g, "w", DT_FLOAT, PartialTensorShape({2}));
  AddConstTensor(&g, "w_init_value", Floats({1, 1}));
  AddTyped(&g, "init", "AssignVariableOp", {"w", "w_init_value"}, "dtype", DT_FLOAT);
  AddTyped(&g, "read", "ReadVariableOp", {"w"}, "dtype", DT_FLOAT);
  NodeDef* acc = AddNode(&g, "acc", "ResourceConditionalAccumulator", {});
  AddNodeAttr("dtype", DT_FLOAT, acc);
  AddNodeAttr("shape", PartialTensorShape({2}), acc);
  AddNodeAttr("shared_name", "w/grad_accum", acc);
  AddPlaceholder(&g, "local_step", DT_INT64, PartialTensorShape({}));
  AddPlaceholder(&g, "grad", DT_FLOAT, PartialTensorShape({2}));
  AddTyped(&g, "apply_grad", "ResourceAccumulatorApplyGradient", {"acc", "local_step", "grad"},
           "dtype", DT_FLOAT);
  AddConstTensor(&g, "replicas", Tensor::Scalar<int32_t>(2));
  AddTyped(&g, "take", "ResourceAccumulatorTakeGradient", {"acc", "replicas"}, "dtype", DT_FLOAT);
  AddConstTensor(&g, "lr", Tensor::Scalar<float>(0.5f));
  AddTyped(&g, "update", "ResourceApplyGradientDescent", {"w", "lr", "take"}, "T", DT_FLOAT);
  AddNode(&g, "num", "ResourceAccumulatorNumAccumulated", {"acc"});

  auto session = MakeSession();
  ASSERT_TRUE(session->Create(g).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  absl::Notification updated;
  absl::Status update_status;
  std::thread chief([&] {
    std::vector<Tensor> chief_out;
    update_status = session->Run({}, {}, {"update"}, &chief_out);
    updated.Notify();
  });
  auto push = [&](std::vector<float> grad) {
    std::vector<Tensor> o;
    return session->Run({{"local_step", Tensor::Scalar<int64_t>(0)}, {"grad", Floats(grad)}}, {},
                        {"apply_grad"}, &o);
  };
  ASSERT_TRUE(push({2, 4}).ok());
  EXPECT_FALSE(updated.WaitForNotificationWithTimeout(absl::Milliseconds(100)));
  std::thread replica([&] { EXPECT_TRUE(push({4, 8}).ok()); });
  EXPECT_TRUE(updated.WaitForNotificationWithTimeout(absl::Seconds(10)));
  chief.join();
  replica.join();
  ASSERT_TRUE(update_status.ok()) << update_status;
  ASSERT_TRUE(session->Run({}, {"read"}, {}, &out).ok());
  // w = [1, 1] - 0.5 * mean([2, 4], [4, 8]) = [-0.5, -2].
  EXPECT_EQ(Values(out[0]), (std::vector<float>{-0.5f, -2}));
  // A late gradient of step 0 is stale now and dropped.
  ASSERT_TRUE(push({100, 100}).ok());
  ASSERT_TRUE(session->Run({}, {"num"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 0);
}

class StateCheckpointSessionTest : public ::testing::Test {
 protected:
  StateCheckpointSessionTest() {
    // One directory per test: ctest runs the tests of a binary in parallel.
    dir_ = std::filesystem::path(::testing::TempDir()) /
           (std::string("state_session_ckpt_") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    prefix_ = (dir_ / "model").string();
  }
  ~StateCheckpointSessionTest() override { std::filesystem::remove_all(dir_); }

  // Resource variable w (float[2]) and ref variable v (float[1]); save writes
  // both; restore reads `restore_names` back into them.
  GraphDef Graph(const std::vector<std::string>& restore_names = {"w", "v"}) {
    GraphDef g = ResourceVariableGraph();
    NodeDef* v = AddNode(&g, "v", "VariableV2", {});
    AddNodeAttr("dtype", DT_FLOAT, v);
    AddNodeAttr("shape", PartialTensorShape({1}), v);
    AddConstTensor(&g, "v_init_value", Floats({7}));
    AddTyped(&g, "v_init", "Assign", {"v", "v_init_value"}, "T", DT_FLOAT);
    AddPlaceholder(&g, "v_new", DT_FLOAT, PartialTensorShape({1}));
    AddTyped(&g, "v_set", "Assign", {"v", "v_new"}, "T", DT_FLOAT);
    AddPlaceholder(&g, "prefix", DT_STRING, PartialTensorShape({}));
    Tensor names(DT_STRING, TensorShape({2}));
    names.flat<std::string>()[0] = "w";
    names.flat<std::string>()[1] = "v";
    AddConstTensor(&g, "save_names", names);
    AddConstTensor(&g, "save_specs", Tensor(DT_STRING, TensorShape({2})));
    NodeDef* save =
        AddNode(&g, "save", "SaveV2", {"prefix", "save_names", "save_specs", "read", "v"});
    AddNodeAttr("dtypes", DataTypeVector{DT_FLOAT, DT_FLOAT}, save);
    Tensor restore_names_t(DT_STRING, TensorShape({2}));
    restore_names_t.flat<std::string>()[0] = restore_names[0];
    restore_names_t.flat<std::string>()[1] = restore_names[1];
    AddConstTensor(&g, "restore_names", restore_names_t);
    NodeDef* restore =
        AddNode(&g, "restore", "RestoreV2", {"prefix", "restore_names", "save_specs"});
    AddNodeAttr("dtypes", DataTypeVector{DT_FLOAT, DT_FLOAT}, restore);
    AddTyped(&g, "restore_w", "AssignVariableOp", {"w", "restore"}, "dtype", DT_FLOAT);
    AddTyped(&g, "restore_v", "Assign", {"v", "restore:1"}, "T", DT_FLOAT);
    return g;
  }
  Tensor Prefix() const { return Tensor::Scalar<std::string>(prefix_); }
  // Fetches (w, v).
  std::vector<std::vector<float>> Variables(Session* session) {
    std::vector<Tensor> out;
    EXPECT_TRUE(session->Run({}, {"read", "v"}, {}, &out).ok());
    if (out.size() != 2) return {};
    return {Values(out[0]), Values(out[1])};
  }
  absl::Status Restore(Session* session) {
    std::vector<Tensor> out;
    return session->Run({{"prefix", Prefix()}}, {}, {"restore_w", "restore_v"}, &out);
  }
  // Saves (w, v) = ([1, 2], [7]), then changes them to ([5, 6], [9]).
  void SaveThenChange(Session* session) {
    std::vector<Tensor> out;
    ASSERT_TRUE(session->Run({}, {}, {"init", "v_init"}, &out).ok());
    absl::Status s = session->Run({{"prefix", Prefix()}}, {}, {"save"}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE(
        session
            ->Run({{"delta", Floats({4, 4})}, {"v_new", Floats({9})}}, {}, {"add", "v_set"}, &out)
            .ok());
    EXPECT_EQ(Variables(session), (std::vector<std::vector<float>>{{5, 6}, {9}}));
  }

  std::filesystem::path dir_;
  std::string prefix_;
};

TEST_F(StateCheckpointSessionTest, SaveAndRestoreVariables) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(Graph()).ok());
  SaveThenChange(session.get());
  absl::Status s = Restore(session.get());
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Variables(session.get()), (std::vector<std::vector<float>>{{1, 2}, {7}}));

  // Another session (fresh devices, fresh variables) restores the same values.
  auto other = MakeSession();
  ASSERT_TRUE(other->Create(Graph()).ok());
  ASSERT_TRUE(Restore(other.get()).ok());
  EXPECT_EQ(Variables(other.get()), (std::vector<std::vector<float>>{{1, 2}, {7}}));
}

TEST_F(StateCheckpointSessionTest, FailedRestoreLeavesVariablesUnchanged) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(Graph()).ok());
  SaveThenChange(session.get());
  const std::string data_file = BundleDataFilename(prefix_);
  std::string data = *ReadFileToString(data_file);
  const std::string good = data;
  data[9] ^= 0x20;  // in v's bytes (w's 8 come first in the data file)
  ASSERT_TRUE(WriteStringToFileAtomic(data_file, data).ok());
  absl::Status s = Restore(session.get());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'v'"));
  EXPECT_EQ(Variables(session.get()), (std::vector<std::vector<float>>{{5, 6}, {9}}));

  ASSERT_TRUE(WriteStringToFileAtomic(data_file, good.substr(0, 10)).ok());
  s = Restore(session.get());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'v'"));
  EXPECT_EQ(Variables(session.get()), (std::vector<std::vector<float>>{{5, 6}, {9}}));
}

TEST_F(StateCheckpointSessionTest, RestoreOfMissingNameLeavesVariablesUnchanged) {
  auto session = MakeSession();
  ASSERT_TRUE(session->Create(Graph({"w", "bias"})).ok());
  SaveThenChange(session.get());
  absl::Status s = Restore(session.get());
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'bias'"));
  EXPECT_EQ(Variables(session.get()), (std::vector<std::vector<float>>{{5, 6}, {9}}));
}

}  // namespace
}  // namespace distflow
