// Scope device functions and ReplicaDeviceSetter: the devices recorded in
// the NodeDefs of variables, their initializers, optimizer slots and
// updates, and every other op.
#include <string>

#include "distflow/cc/client_session.h"
#include "distflow/cc/op_builder.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/training/device_setter.h"
#include "distflow/training/momentum.h"
#include "distflow/training/variable.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

const NodeDef& Def(const Output& o) { return o.node()->def(); }
const NodeDef& Def(const Operation& o) { return o.node()->def(); }

TEST(DeviceFunctionTest, ChoosesByOpTypeAndColocationWins) {
  Scope root = Scope::NewRootScope();
  Scope scope = root.WithDeviceFunction([](absl::string_view op_type) {
    return op_type == "Const" ? std::string("/job:a") : std::string("/job:b");
  });
  auto c = ops::Const(scope, 1.f);
  auto neg = ops::Neg(scope, c);
  auto with_c = ops::Neg(scope.ColocateWith(c), c);
  auto explicit_device = ops::Neg(scope.WithDevice("/job:c"), c);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Def(c).device(), "/job:a");
  EXPECT_EQ(Def(neg).device(), "/job:b");
  EXPECT_EQ(Def(with_c).device(), "/job:a");
  EXPECT_EQ(Def(explicit_device).device(), "/job:c");
  EXPECT_EQ(Def(ops::Neg(scope.WithDevice("/job:c").ColocateWith(c), c)).device(), "/job:a");
  // Scopes without a device function request no device, unless colocated.
  EXPECT_EQ(Def(ops::Neg(root, c)).device(), "");
  EXPECT_EQ(Def(ops::Neg(root.ColocateWith(c), c)).device(), "/job:a");
}

TEST(ReplicaDeviceSetterTest, VariablesRoundRobinOverPsTasks) {
  Scope root = Scope::NewRootScope();
  Scope scope = ReplicaDeviceSetter(root, 2, "/job:worker/task:3");
  Variable w0(scope.WithOpName("w0"), {1.f, 2.f});
  Variable w1(scope.WithOpName("w1"), {3.f});
  Variable w2(scope.WithOpName("w2"), 4.f);
  auto sum =
      ops::AddV2(scope, ops::Sum(scope, w0.Read(scope), 0), ops::Sum(scope, w1.Read(scope), 0));
  ASSERT_TRUE(root.ok()) << root.status();

  EXPECT_EQ(Def(w0.handle()).device(), "/job:ps/task:0");
  EXPECT_EQ(Def(w1.handle()).device(), "/job:ps/task:1");
  EXPECT_EQ(Def(w2.handle()).device(), "/job:ps/task:0");
  // Initializers follow their variable.
  EXPECT_EQ(Def(w0.initializer()).device(), "/job:ps/task:0");
  EXPECT_EQ(Def(w1.initializer()).device(), "/job:ps/task:1");
  EXPECT_EQ(w1.initializer().node()->name(), "w1/Assign");
  // Everything else runs on the worker.
  EXPECT_EQ(Def(sum).device(), "/job:worker/task:3");
  EXPECT_EQ(Def(w0.initial_value()).device(), "/job:worker/task:3");
  // Reads and writes built in the worker's scope run with the variable;
  // their values travel to the worker.
  EXPECT_EQ(Def(w1.Read(scope)).device(), "/job:ps/task:1");
  EXPECT_EQ(Def(w2.Assign(scope, 5.f)).device(), "/job:ps/task:0");
  EXPECT_EQ(Def(w0.AssignAdd(scope, {1.f, 1.f})).device(), "/job:ps/task:0");
}

TEST(VariablePlacementTest, ReadInAnotherDevicesScopeRunsWithTheVariable) {
  Scope root = Scope::NewRootScope();
  const Scope dev0 = root.WithDevice("/device:CPU:0");
  const Scope dev1 = root.WithDevice("/device:CPU:1");
  Variable v(dev1.WithOpName("v"), {1.f, 2.f});
  // Built in CPU:0's scope: the reads and the update go to CPU:1 with the
  // variable and only their values cross to CPU:0.
  auto bump = v.AssignAdd(dev0, {10.f, 20.f});
  auto doubled = ops::Mul(dev0, v.Read(dev0.WithControlDependencies({bump})), 2.f);
  ASSERT_TRUE(root.ok()) << root.status();
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 2;
  ClientSession session(root, options);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({}, {}, {v.initializer()}, &out).ok());
  absl::Status s = session.Run({doubled}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].DebugString(), "Tensor<type: float32 shape: [2] values: [22 44]>");
}

TEST(ReplicaDeviceSetterTest, OptimizerSlotsUpdatesAndGlobalStepFollowVariables) {
  Scope root = Scope::NewRootScope();
  Scope scope = ReplicaDeviceSetter(root, 2, "/job:worker");
  Variable step = CreateGlobalStep(scope);
  Variable w(scope.WithOpName("w"), {1.f, 2.f});
  Variable b(scope.WithOpName("b"), 0.f);
  auto x = ops::Placeholder(scope, DT_FLOAT);
  auto loss = ops::Sum(
      scope,
      ops::Square(scope, ops::AddV2(scope, ops::Mul(scope, w.Read(scope), x), b.Read(scope))), 0);
  MomentumOptimizer opt(scope, 0.1, 0.9);
  auto train = opt.Minimize(loss, {w, b}, &step);
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(root.ok()) << root.status();

  EXPECT_EQ(Def(step.handle()).device(), "/job:ps/task:0");
  EXPECT_EQ(Def(w.handle()).device(), "/job:ps/task:1");
  EXPECT_EQ(Def(b.handle()).device(), "/job:ps/task:0");
  EXPECT_EQ(Def(*train).device(), "/job:ps/task:0");  // the global step's
  GraphDef graph;
  ASSERT_TRUE(root.ToGraphDef(&graph).ok());
  int slots = 0, applies = 0;
  for (const NodeDef& n : graph.node()) {
    if (n.op() == "ResourceApplyMomentum") {
      ++applies;
      EXPECT_EQ(n.device(), n.name().find("update_w/") != std::string::npos ? "/job:ps/task:1"
                                                                            : "/job:ps/task:0")
          << n.name();
    }
    if (n.op() == "VarHandleOp" && n.name().find("/Momentum") != std::string::npos) {
      ++slots;
      EXPECT_EQ(n.device(), n.name() == "w/Momentum" ? "/job:ps/task:1" : "/job:ps/task:0")
          << n.name();
    }
    if (n.op() == "MatMul" || n.op() == "Square") {
      EXPECT_EQ(n.device(), "/job:worker") << n.name();
    }
  }
  EXPECT_EQ(slots, 2);
  EXPECT_EQ(applies, 2);
}

TEST(ReplicaDeviceSetterTest, NoPsTasksPutsEverythingOnTheWorker) {
  Scope root = Scope::NewRootScope();
  Scope scope = ReplicaDeviceSetter(root, 0, "/job:worker/task:0");
  Variable v(scope.WithOpName("v"), 1.0);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(Def(v.handle()).device(), "/job:worker/task:0");
}

TEST(ReplicaDeviceSetterTest, NegativePsTasksIsAnError) {
  Scope root = Scope::NewRootScope();
  ReplicaDeviceSetter(root, -1, "/job:worker");
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("ps_tasks >= 0, got -1"));
}

TEST(ReplicaDeviceSetterTest, RefVariablesAndTheirAssignsToo) {
  Scope root = Scope::NewRootScope();
  Scope scope = ReplicaDeviceSetter(root, 3, "/job:worker");
  Variable first(scope.WithOpName("first"), 0.f);
  Node* v = ops::internal::BuildOp(scope.WithOpName("v"), "VariableV2", {},
                                   {{"shape", PartialTensorShape({})}, {"dtype", DT_FLOAT}});
  ASSERT_NE(v, nullptr) << root.status();
  const Input ref(Output(v, 0));
  const Input value(1.f);
  Node* assign = ops::internal::BuildOp(scope.ColocateWith(Operation(v)), "Assign", {ref, value});
  ASSERT_NE(assign, nullptr) << root.status();
  EXPECT_EQ(Def(first.handle()).device(), "/job:ps/task:0");
  EXPECT_EQ(v->def().device(), "/job:ps/task:1");
  EXPECT_EQ(assign->def().device(), "/job:ps/task:1");
}

}  // namespace
}  // namespace distflow
