#include "distflow/graph/node_builder.h"

#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

REGISTER_OP("NBTestSource").Output("out: dtype").Attr("dtype: type").SetShapeFn(UnknownShape);
REGISTER_OP("NBTestTwoOut")
    .Output("a: dtype")
    .Output("b: dtype")
    .Attr("dtype: type")
    .SetShapeFn(UnknownShape);
REGISTER_OP("NBTestBinary")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {float, int32}")
    .SetShapeFn(UnchangedShape);
REGISTER_OP("NBTestList")
    .Input("values: N * T")
    .Output("out: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .SetShapeFn(UnknownShape);
REGISTER_OP("NBTestTypeList").Input("args: Tlist").Attr("Tlist: list(type)").SetShapeFn(NoOutputs);
REGISTER_OP("NBTestFixed")
    .Input("x: float")
    .Output("y: float")
    .Attr("flag: bool = true")
    .SetShapeFn(UnchangedShape);

class NodeBuilderTest : public ::testing::Test {
 protected:
  Node* Source(const std::string& name, DataType dtype) {
    auto node = NodeBuilder(name, "NBTestSource").Attr("dtype", dtype).Finalize(&graph_);
    EXPECT_TRUE(node.ok()) << node.status();
    return node.ok() ? *node : nullptr;
  }

  // Expects `builder` to fail with `code` and leave the graph unchanged.
  absl::Status ExpectFailure(const NodeBuilder& builder, absl::StatusCode code) {
    const int nodes = graph_.num_nodes();
    const int edges = graph_.num_edges();
    Node* created = reinterpret_cast<Node*>(1);
    absl::Status s = builder.Finalize(&graph_, &created);
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_EQ(created, nullptr);
    EXPECT_EQ(graph_.num_nodes(), nodes);
    EXPECT_EQ(graph_.num_edges(), edges);
    return s;
  }

  Graph graph_;
};

TEST_F(NodeBuilderTest, InfersTypeAttrAndAddsEdges) {
  Node* a = Source("a", DT_FLOAT);
  Node* b = Source("b", DT_FLOAT);
  auto add = NodeBuilder("add", "NBTestBinary").Input(a).Input(b).Finalize(&graph_);
  ASSERT_TRUE(add.ok()) << add.status();
  Node* n = *add;
  DataType t;
  ASSERT_TRUE(GetNodeAttr(n->attrs(), "T", &t).ok());
  EXPECT_EQ(t, DT_FLOAT);
  EXPECT_THAT(n->input_types(), ElementsAre(DT_FLOAT, DT_FLOAT));
  EXPECT_THAT(n->output_types(), ElementsAre(DT_FLOAT));
  EXPECT_THAT(n->def().input(), ElementsAre("a", "b"));
  const Node* in1;
  ASSERT_TRUE(n->input_node(1, &in1).ok());
  EXPECT_EQ(in1, b);
}

TEST_F(NodeBuilderTest, OutputIndexAppearsInInputName) {
  auto two = NodeBuilder("two", "NBTestTwoOut").Attr("dtype", DT_INT32).Finalize(&graph_);
  ASSERT_TRUE(two.ok());
  auto add = NodeBuilder("add", "NBTestBinary")
                 .Input(*two, 1)
                 .Input(NodeBuilder::NodeOut(*two, 0))
                 .Finalize(&graph_);
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_THAT((*add)->def().input(), ElementsAre("two:1", "two"));
  const Edge* e;
  ASSERT_TRUE((*add)->input_edge(0, &e).ok());
  EXPECT_EQ(e->src_output(), 1);
}

TEST_F(NodeBuilderTest, ListInputSetsNumberAndTypeAttrs) {
  std::vector<NodeBuilder::NodeOut> ins = {Source("a", DT_INT64), Source("b", DT_INT64),
                                           Source("c", DT_INT64)};
  auto n = NodeBuilder("list", "NBTestList").Input(ins).Finalize(&graph_);
  ASSERT_TRUE(n.ok()) << n.status();
  int64_t count;
  DataType t;
  ASSERT_TRUE(GetNodeAttr((*n)->attrs(), "N", &count).ok());
  ASSERT_TRUE(GetNodeAttr((*n)->attrs(), "T", &t).ok());
  EXPECT_EQ(count, 3);
  EXPECT_EQ(t, DT_INT64);
  EXPECT_EQ((*n)->num_inputs(), 3);
}

TEST_F(NodeBuilderTest, TypeListAttrComesFromInputs) {
  std::vector<NodeBuilder::NodeOut> ins = {Source("a", DT_FLOAT), Source("b", DT_BOOL)};
  auto n = NodeBuilder("tl", "NBTestTypeList").Input(ins).Finalize(&graph_);
  ASSERT_TRUE(n.ok()) << n.status();
  std::vector<DataType> types;
  ASSERT_TRUE(GetNodeAttr((*n)->attrs(), "Tlist", &types).ok());
  EXPECT_THAT(types, ElementsAre(DT_FLOAT, DT_BOOL));
}

TEST_F(NodeBuilderTest, DefaultsAreFilled) {
  auto n = NodeBuilder("f", "NBTestFixed").Input(Source("a", DT_FLOAT)).Finalize(&graph_);
  ASSERT_TRUE(n.ok()) << n.status();
  bool flag = false;
  ASSERT_TRUE(GetNodeAttr((*n)->attrs(), "flag", &flag).ok());
  EXPECT_TRUE(flag);
}

TEST_F(NodeBuilderTest, ControlInputsAndDevice) {
  Node* a = Source("a", DT_FLOAT);
  Node* c = Source("c", DT_FLOAT);
  auto n = NodeBuilder("f", "NBTestFixed")
               .Input(a)
               .ControlInput(c)
               .ControlInput(c)
               .Device("/job:ps/task:0/device:CPU:0")
               .Finalize(&graph_);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_THAT((*n)->def().input(), ElementsAre("a", "^c"));
  EXPECT_EQ((*n)->requested_device(), "/job:ps/task:0/device:CPU:0");
  int control_edges = 0;
  for (const Edge* e : (*n)->in_edges()) control_edges += e->IsControlEdge();
  EXPECT_EQ(control_edges, 1);
}

TEST_F(NodeBuilderTest, UnknownOpNamesOpAndNode) {
  absl::Status s =
      ExpectFailure(NodeBuilder("mystery", "NoSuchOp"), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("op 'NoSuchOp' is not registered"));
  EXPECT_THAT(s.message(), HasSubstr("mystery"));
}

TEST_F(NodeBuilderTest, MismatchedInputTypesNameNodeAndTypes) {
  Node* f = Source("f", DT_FLOAT);
  Node* i = Source("i", DT_INT32);
  absl::Status s = ExpectFailure(NodeBuilder("add", "NBTestBinary").Input(f).Input(i),
                                 absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'add' (NBTestBinary)"));
  EXPECT_THAT(s.message(), HasSubstr("input 'y' gets int32 from 'i:0'"));
  EXPECT_THAT(s.message(), HasSubstr("attr 'T' is float32"));
}

TEST_F(NodeBuilderTest, ExplicitAttrConflictsWithInput) {
  absl::Status s = ExpectFailure(NodeBuilder("add", "NBTestBinary")
                                     .Attr("T", DT_INT32)
                                     .Input(Source("a", DT_FLOAT))
                                     .Input(Source("b", DT_FLOAT)),
                                 absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 'x' gets float32"));
  EXPECT_THAT(s.message(), HasSubstr("attr 'T' is int32"));
}

TEST_F(NodeBuilderTest, FixedTypeInputMismatch) {
  absl::Status s = ExpectFailure(NodeBuilder("f", "NBTestFixed").Input(Source("i", DT_INT32)),
                                 absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'f' (NBTestFixed): input 0 expects "
                                     "float32 but 'i:0' is int32"));
}

TEST_F(NodeBuilderTest, TypeOutsideAllowedList) {
  absl::Status s = ExpectFailure(
      NodeBuilder("add", "NBTestBinary").Input(Source("a", DT_BOOL)).Input(Source("b", DT_BOOL)),
      absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'add' (NBTestBinary)"));
  EXPECT_THAT(s.message(), HasSubstr("'T'"));
}

TEST_F(NodeBuilderTest, WrongNumberOfInputs) {
  absl::Status s = ExpectFailure(NodeBuilder("add", "NBTestBinary").Input(Source("a", DT_FLOAT)),
                                 absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'add' (NBTestBinary): op 'NBTestBinary' takes 2 "
                                     "inputs (x, y) but 1 were given"));
}

TEST_F(NodeBuilderTest, ListWhereSingleExpectedAndTheReverse) {
  Node* a = Source("a", DT_FLOAT);
  std::vector<NodeBuilder::NodeOut> list = {a, a};
  absl::Status s = ExpectFailure(NodeBuilder("add", "NBTestBinary").Input(list).Input(a),
                                 absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 'x' takes a single tensor but was given a list"));
  s = ExpectFailure(NodeBuilder("l", "NBTestList").Input(a), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 'values' takes a list of tensors "
                                     "but was given a single tensor"));
}

TEST_F(NodeBuilderTest, EmptyListViolatesMinimum) {
  absl::Status s = ExpectFailure(NodeBuilder("l", "NBTestList")
                                     .Attr("T", DT_FLOAT)
                                     .Input(absl::Span<const NodeBuilder::NodeOut>()),
                                 absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'l' (NBTestList)"));
  EXPECT_THAT(s.message(), HasSubstr("'N'"));
}

TEST_F(NodeBuilderTest, NullAndOutOfRangeInputs) {
  absl::Status s = ExpectFailure(NodeBuilder("f", "NBTestFixed").Input(nullptr),
                                 absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'f' (NBTestFixed): input 'x' is missing"));
  s = ExpectFailure(NodeBuilder("f", "NBTestFixed").Input(Source("a", DT_FLOAT), 3),
                    absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("reads 'a:3' but node 'a' has 1 outputs"));
  s = ExpectFailure(
      NodeBuilder("f", "NBTestFixed").Input(Source("b", DT_FLOAT)).ControlInput(nullptr),
      absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("control input is a null node"));
}

TEST_F(NodeBuilderTest, InputFromAnotherGraph) {
  Graph other;
  auto foreign = NodeBuilder("x", "NBTestSource").Attr("dtype", DT_FLOAT).Finalize(&other);
  ASSERT_TRUE(foreign.ok());
  Source("pad0", DT_FLOAT);
  Source("pad1", DT_FLOAT);  // so the foreign id exists here too
  absl::Status s = ExpectFailure(NodeBuilder("f", "NBTestFixed").Input(*foreign),
                                 absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("comes from node 'x' which is not in this graph"));
}

TEST_F(NodeBuilderTest, MissingRequiredAttr) {
  absl::Status s =
      ExpectFailure(NodeBuilder("s", "NBTestSource"), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 's' (NBTestSource) is missing attr 'dtype'"));
}

TEST_F(NodeBuilderTest, UnknownAttr) {
  absl::Status s =
      ExpectFailure(NodeBuilder("s", "NBTestSource").Attr("dtype", DT_FLOAT).Attr("colour", "red"),
                    absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("attr 'colour'"));
}

TEST_F(NodeBuilderTest, BadNameAndDevice) {
  absl::Status s = ExpectFailure(NodeBuilder("bad name!", "NBTestSource").Attr("dtype", DT_FLOAT),
                                 absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'bad name!' is not a valid node name"));
  s = ExpectFailure(
      NodeBuilder("s", "NBTestSource").Attr("dtype", DT_FLOAT).Device("/gpu-ish:zero"),
      absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("node 's' (NBTestSource): malformed device name '/gpu-ish:zero'"));
}

}  // namespace
}  // namespace distflow
