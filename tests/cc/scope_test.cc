#include "distflow/cc/scope.h"

#include "distflow/cc/ops/standard_ops.h"
#include "distflow/graph/graph_constructor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const NodeDef* FindNode(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

TEST(ScopeTest, UniqueNamesPerDefaultName) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(ops::NoOp(root).node()->name(), "NoOp");
  EXPECT_EQ(ops::NoOp(root).node()->name(), "NoOp_1");
  EXPECT_EQ(ops::NoOp(root).node()->name(), "NoOp_2");
  EXPECT_EQ(root.GetUniqueNameForOp("Add"), "Add");
  EXPECT_EQ(root.GetUniqueNameForOp("Add"), "Add_1");
  // A copy of a scope shares its names.
  Scope copy = root;
  EXPECT_EQ(copy.GetUniqueNameForOp("Add"), "Add_2");
}

TEST(ScopeTest, SuffixedNameAlreadyTakenIsSkipped) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(root.GetUniqueNameForOp("a_1"), "a_1");
  EXPECT_EQ(root.GetUniqueNameForOp("a"), "a");
  EXPECT_EQ(root.GetUniqueNameForOp("a"), "a_2");
}

TEST(ScopeTest, SubScopesPrefixNames) {
  Scope root = Scope::NewRootScope();
  Scope outer = root.NewSubScope("outer");
  Scope inner = outer.NewSubScope("inner");
  EXPECT_EQ(ops::NoOp(inner).node()->name(), "outer/inner/NoOp");
  EXPECT_EQ(ops::NoOp(inner).node()->name(), "outer/inner/NoOp_1");
  EXPECT_EQ(ops::NoOp(outer).node()->name(), "outer/NoOp");
  EXPECT_EQ(ops::NoOp(root).node()->name(), "NoOp");
  // A second sub-scope of the same name gets a unique one.
  EXPECT_EQ(ops::NoOp(root.NewSubScope("outer")).node()->name(), "outer_1/NoOp");
  EXPECT_EQ(inner.name_prefix(), "outer/inner");
  // An empty sub-scope name keeps the prefix and the names.
  EXPECT_EQ(ops::NoOp(outer.NewSubScope("")).node()->name(), "outer/NoOp_1");
}

TEST(ScopeTest, OpAndSubScopeNamesDoNotCollide) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(ops::NoOp(root.WithOpName("layer")).node()->name(), "layer");
  EXPECT_EQ(ops::NoOp(root.NewSubScope("layer")).node()->name(), "layer_1/NoOp");
}

TEST(ScopeTest, WithOpName) {
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(ops::NoOp(root.WithOpName("init")).node()->name(), "init");
  EXPECT_EQ(ops::NoOp(root.WithOpName("init")).node()->name(), "init_1");
  EXPECT_EQ(ops::NoOp(root.WithOpName("step_", 3)).node()->name(), "step_3");
  Scope sub = root.NewSubScope("train");
  EXPECT_EQ(ops::NoOp(sub.WithOpName("init")).node()->name(), "train/init");
  // The op name applies to the op, not to the constants made for its inputs.
  auto add = ops::Add(root.WithOpName("sum"), 1.f, 2.f);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(add.node()->name(), "sum");
  EXPECT_EQ(add.operation.input(0).node()->name(), "Const/Const");
  EXPECT_EQ(add.operation.input(1).node()->name(), "Const_1/Const");
}

TEST(ScopeTest, ControlDependenciesRecordedInNodeDef) {
  Scope root = Scope::NewRootScope();
  auto a = ops::NoOp(root.WithOpName("a"));
  auto b = ops::NoOp(root.WithOpName("b"));
  Scope after_a = root.WithControlDependencies({a.operation});
  Scope after_ab = after_a.WithControlDependencies({b.operation});
  ops::NoOp(after_ab.WithOpName("c"));
  auto d = ops::Identity(after_a.WithOpName("d"), ops::Const(root.WithOpName("k"), 1.f));
  ops::NoOp(after_ab.WithNoControlDependencies().WithOpName("e"));
  ops::NoOp(root.WithControlDependencies(d.output).WithOpName("f"));
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(after_ab.control_deps().size(), 2u);

  GraphDef g;
  ASSERT_TRUE(root.ToGraphDef(&g).ok());
  EXPECT_THAT(FindNode(g, "c")->input(), ElementsAre("^a", "^b"));
  EXPECT_THAT(FindNode(g, "d")->input(), ElementsAre("k", "^a"));
  EXPECT_THAT(FindNode(g, "e")->input(), IsEmpty());
  EXPECT_THAT(FindNode(g, "f")->input(), ElementsAre("^d"));
}

TEST(ScopeTest, DeviceRecordedInNodeDef) {
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  auto v = ops::Const(ps.WithOpName("v"), 1.f);
  ops::Identity(ps.WithDevice("/job:worker/task:1/device:CPU:0").WithOpName("w"), v);
  ASSERT_TRUE(root.ok()) << root.status();
  GraphDef g;
  ASSERT_TRUE(root.ToGraphDef(&g).ok());
  EXPECT_EQ(FindNode(g, "v")->device(), "/job:ps/task:0");
  EXPECT_EQ(FindNode(g, "w")->device(), "/job:worker/task:1/device:CPU:0");
}

TEST(ScopeTest, MalformedDeviceFailsNamingTheNode) {
  Scope root = Scope::NewRootScope();
  ops::NoOp(root.WithDevice("/job:ps/task:zero").WithOpName("x"));
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(root.status().message(), HasSubstr("node 'x' (NoOp)"));
  EXPECT_THAT(root.status().message(), HasSubstr("/job:ps/task:zero"));
}

TEST(ScopeTest, ColocateWithSetsClassAttr) {
  Scope root = Scope::NewRootScope();
  auto v = ops::Const(root.WithOpName("var"), 1.f);
  auto r = ops::Identity(root.ColocateWith(v).WithOpName("read"), v);
  auto s = ops::Identity(root.ColocateWith(v).ClearColocation().WithOpName("s"), v);
  ASSERT_TRUE(root.ok()) << root.status();
  std::vector<std::string> cls;
  ASSERT_TRUE(GetNodeAttr(r.node()->attrs(), "_class", &cls).ok());
  EXPECT_THAT(cls, ElementsAre("loc:@var"));
  EXPECT_FALSE(HasNodeAttr(s.node()->def(), "_class"));
}

TEST(ScopeTest, FirstErrorIsKeptAndLaterOpsAreNoOps) {
  Scope root = Scope::NewRootScope();
  root.UpdateStatus(absl::OkStatus());
  EXPECT_TRUE(root.ok());
  Scope child = root.NewSubScope("child");
  child.UpdateStatus(absl::InvalidArgumentError("first"));
  root.UpdateStatus(absl::InternalError("second"));
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(root.status().message(), "first");
  const int nodes = root.graph()->num_nodes();
  auto noop = ops::NoOp(root);
  auto c = ops::Const(root, 1.f);
  EXPECT_EQ(noop.node(), nullptr);
  EXPECT_EQ(c.node(), nullptr);
  EXPECT_EQ(root.graph()->num_nodes(), nodes);
  GraphDef g;
  absl::Status s = root.ToGraphDef(&g);
  EXPECT_EQ(s.message(), "first");
}

TEST(ScopeTest, ToGraphDefWritesNodesInOrder) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({2, 3}));
  ops::Relu(root.WithOpName("y"), x);
  ASSERT_TRUE(root.ok()) << root.status();
  GraphDef g;
  ASSERT_TRUE(root.ToGraphDef(&g).ok());
  ASSERT_EQ(g.node_size(), 2);
  EXPECT_EQ(g.node(0).name(), "x");
  EXPECT_EQ(g.node(0).op(), "Placeholder");
  EXPECT_EQ(g.node(1).name(), "y");
  EXPECT_EQ(g.node(1).op(), "Relu");
  EXPECT_THAT(g.node(1).input(), ElementsAre("x"));
  EXPECT_EQ(g.node(1).attr().at("T").type(), DT_FLOAT);
  EXPECT_EQ(g.node(0).attr().at("shape").shape().dim_size(), 2);
}

TEST(ScopeTest, GraphDefOfAModelReimports) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({-1, 4}));
  auto labels = ops::Placeholder(root.WithOpName("labels"), DT_INT64);
  Scope layer = root.NewSubScope("dense");
  auto w = ops::RandomNormal(layer, {4, 3}, DT_FLOAT, ops::RandomNormal::Seed(1));
  auto logits = ops::BiasAdd(layer, ops::MatMul(layer, x, w), {0.f, 0.f, 0.f});
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(root, logits, labels);
  auto loss = ops::Mean(root.WithOpName("loss"), xent.loss, 0);
  auto probs = ops::Softmax(root.WithDevice("/job:worker/task:0"), logits);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(logits.node()->name(), "dense/BiasAdd");
  EXPECT_EQ(root.refiner()->OutputShape(probs.node(), 0).DebugString(), "[?,3]");
  EXPECT_EQ(root.refiner()->OutputShape(loss.node(), 0).DebugString(), "[]");

  GraphDef g;
  ASSERT_TRUE(root.ToGraphDef(&g).ok());
  EXPECT_EQ(g.node_size(), root.graph()->num_op_nodes());
  Graph imported;
  absl::Status s = ConvertGraphDefToGraph({}, g, &imported);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(imported.num_op_nodes(), root.graph()->num_op_nodes());
}

TEST(ScopeTest, ShapesAreInferredAtConstruction) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, ops::Placeholder::Shape({-1, 3}));
  auto y = ops::Relu(root, x);
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root.refiner()->OutputShape(y.node(), 0).DebugString(), "[?,3]");
}

TEST(ScopeTest, GraphOutlivesScopes) {
  std::shared_ptr<Graph> graph;
  {
    Scope root = Scope::NewRootScope();
    ops::NoOp(root.WithOpName("kept"));
    graph = root.graph_as_shared_ptr();
  }
  ASSERT_EQ(graph->num_op_nodes(), 1);
  EXPECT_EQ(graph->op_nodes()[0]->name(), "kept");
}

}  // namespace
}  // namespace distflow
