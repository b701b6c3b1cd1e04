#include "distflow/framework/node_def_util.h"
#include "distflow/framework/op_def_builder.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

REGISTER_OP("TestOpDefMix")
    .Input("a: T")
    .Input("rest: N * T")
    .Input("idx: Tidx")
    .Output("out: T")
    .Attr("T: {float, int32}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Attr("mode: {'fast', 'exact'} = 'fast'")
    .Attr("keep: bool = false")
    .Attr("ratio: float = 0.5")
    .Attr("dims: list(int) = [1, 2]")
    .Attr("shape: shape = { unknown_rank: true }")
    .SetShapeFn(UnchangedShape);

OpRegistrationData Build(OpDefBuilder b) {
  OpRegistrationData data;
  absl::Status s = b.Finalize(&data);
  EXPECT_TRUE(s.ok()) << s;
  return data;
}

TEST(OpDefBuilderTest, ParsesSpecs) {
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp("TestOpDefMix");
  ASSERT_NE(reg, nullptr);
  const OpDef& op = reg->op_def;
  ASSERT_EQ(op.input_arg_size(), 3);
  EXPECT_EQ(op.input_arg(0).type_attr(), "T");
  EXPECT_EQ(op.input_arg(1).number_attr(), "N");
  // N was declared implicitly as int >= 1.
  bool found_n = false;
  for (const auto& a : op.attr()) {
    if (a.name() == "N") {
      found_n = true;
      EXPECT_EQ(a.type(), "int");
      EXPECT_TRUE(a.has_minimum());
      EXPECT_EQ(a.minimum(), 1);
    }
    if (a.name() == "dims") {
      EXPECT_EQ(a.default_value().list().i_size(), 2);
    }
    if (a.name() == "shape") {
      EXPECT_TRUE(a.default_value().shape().unknown_rank());
    }
    if (a.name() == "mode") {
      EXPECT_EQ(a.allowed_values().list().s_size(), 2);
    }
    if (a.name() == "Tidx") {
      EXPECT_EQ(a.default_value().type(), DT_INT32);
    }
  }
  EXPECT_TRUE(found_n);
}

TEST(OpDefBuilderTest, BadSpecsAreErrors) {
  OpRegistrationData data;
  EXPECT_THAT(OpDefBuilder("Bad").Attr("x: nonsense").Finalize(&data).message(),
              HasSubstr("op 'Bad': unknown attr type 'nonsense'"));
  EXPECT_THAT(OpDefBuilder("Bad").Attr("x: int = abc").Finalize(&data).message(),
              HasSubstr("cannot parse 'abc' as a value of type int"));
  EXPECT_THAT(OpDefBuilder("Bad").Input("nocolon").Finalize(&data).message(),
              HasSubstr("expected 'name: type'"));
  EXPECT_THAT(OpDefBuilder("Bad").Attr("x: int").Attr("x: int").Finalize(&data).message(),
              HasSubstr("declared twice"));
  EXPECT_THAT(OpDefBuilder("Bad").Attr("x: int").Input("a: x").Finalize(&data).message(),
              HasSubstr("has type int"));
}

TEST(OpDefBuilderTest, RefAndFixedTypes) {
  OpRegistrationData d =
      Build(OpDefBuilder("R").Input("ref: Ref(T)").Input("h: resource").Output("o: int64"));
  EXPECT_TRUE(d.op_def.input_arg(0).is_ref());
  EXPECT_EQ(d.op_def.input_arg(1).type(), DT_RESOURCE);
  EXPECT_EQ(d.op_def.output_arg(0).type(), DT_INT64);
}

NodeDef MixNode() {
  NodeDef n;
  n.set_name("mix");
  n.set_op("TestOpDefMix");
  n.add_input("a");
  n.add_input("b");
  n.add_input("c");
  n.add_input("i");
  n.add_input("^ctl");
  AddNodeAttr("T", DT_FLOAT, &n);
  AddNodeAttr("N", int64_t{2}, &n);
  return n;
}

TEST(NodeDefUtilTest, ValidNodeAndTypes) {
  const OpDef& op = OpRegistry::Global()->LookUp("TestOpDefMix")->op_def;
  NodeDef n = MixNode();
  AddDefaultsToNodeDef(op, &n);
  ASSERT_TRUE(ValidateNodeDef(n, op).ok()) << ValidateNodeDef(n, op);
  DataTypeVector in, out;
  ASSERT_TRUE(InOutTypesForNode(n, op, &in, &out).ok());
  EXPECT_EQ(DataTypeSliceString(in), "float32, float32, float32, int32");
  EXPECT_EQ(DataTypeSliceString(out), "float32");
  NameRangeMap in_ranges, out_ranges;
  ASSERT_TRUE(NameRangesForNode(n, op, &in_ranges, &out_ranges).ok());
  EXPECT_EQ(in_ranges["rest"], std::make_pair(1, 3));
  std::string mode;
  ASSERT_TRUE(GetNodeAttr(AttrSlice(n), "mode", &mode).ok());
  EXPECT_EQ(mode, "fast");
}

TEST(NodeDefUtilTest, ValidationErrorsNameNodeAttrAndValues) {
  const OpDef& op = OpRegistry::Global()->LookUp("TestOpDefMix")->op_def;
  NodeDef n = MixNode();
  AddDefaultsToNodeDef(op, &n);

  NodeDef bad = n;
  AddNodeAttr("T", DT_STRING, &bad);
  EXPECT_THAT(ValidateNodeDef(bad, op).message(),
              HasSubstr("node 'mix' (TestOpDefMix): attr 'T' has value string which is not in "
                        "the allowed list: float32, int32"));
  bad = n;
  AddNodeAttr("mode", "slow", &bad);
  EXPECT_THAT(ValidateNodeDef(bad, op).message(), HasSubstr("attr 'mode' has value \"slow\""));
  bad = n;
  AddNodeAttr("N", int64_t{0}, &bad);
  EXPECT_THAT(ValidateNodeDef(bad, op).message(),
              HasSubstr("attr 'N' has value 0 which is less than the minimum 1"));
  bad = n;
  bad.mutable_attr()->erase("T");
  EXPECT_THAT(ValidateNodeDef(bad, op).message(),
              HasSubstr("node 'mix' (TestOpDefMix) is missing attr 'T' of type type"));
  bad = n;
  AddNodeAttr("keep", int64_t{3}, &bad);
  EXPECT_THAT(ValidateNodeDef(bad, op).message(),
              HasSubstr("attr 'keep': expected a value of type bool, found 3"));
  bad = n;
  bad.add_input("late");
  EXPECT_THAT(ValidateNodeDef(bad, op).message(), HasSubstr("comes after a control input"));
  bad = n;
  bad.mutable_input()->DeleteSubrange(0, 1);
  EXPECT_THAT(ValidateNodeDef(bad, op).message(), HasSubstr("expects 4 data inputs but has 3"));

  int64_t i;
  EXPECT_THAT(GetNodeAttr(AttrSlice(n), "missing", &i).message(),
              HasSubstr("node 'mix' (TestOpDefMix) has no attr named 'missing'"));
  EXPECT_THAT(GetNodeAttr(AttrSlice(n), "mode", &i).message(),
              HasSubstr("attr 'mode': expected a value of type int"));
}

TEST(ShapeInferenceTest, Broadcast) {
  PartialTensorShape out;
  ASSERT_TRUE(
      BroadcastShapes(PartialTensorShape({2, 1, 3}), PartialTensorShape({4, 1}), &out).ok());
  EXPECT_EQ(out.DebugString(), "[2,4,3]");
  ASSERT_TRUE(BroadcastShapes(PartialTensorShape({-1, 3}), PartialTensorShape({3}), &out).ok());
  EXPECT_EQ(out.DebugString(), "[?,3]");
  EXPECT_THAT(BroadcastShapes(PartialTensorShape({2, 3}), PartialTensorShape({4}), &out).message(),
              HasSubstr("incompatible shapes for broadcasting: [2,3] and [4]"));
}

}  // namespace
}  // namespace distflow
