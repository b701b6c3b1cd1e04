// Tests for the shape functions of the math ops on partially known shapes
// (the kernel tests cover fully known ones).
#include <string>

#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "gmock/gmock.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// Infers the output shapes of `op` for input shapes `shapes`; `values[i]`,
// when set, is input i's constant value.
absl::StatusOr<std::vector<std::string>> Infer(const std::string& op,
                                               const std::vector<PartialTensorShape>& shapes,
                                               const std::vector<test::KernelAttr>& attrs,
                                               const std::vector<const Tensor*>& values = {}) {
  NodeDef def;
  def.set_name("n");
  def.set_op(op);
  for (size_t i = 0; i < shapes.size(); ++i) def.add_input("in" + std::to_string(i));
  for (const test::KernelAttr& a : attrs) (*def.mutable_attr())[a.name] = a.value;
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp(op);
  if (reg == nullptr) return errors::NotFound(op);
  AddDefaultsToNodeDef(reg->op_def, &def);
  DF_RETURN_IF_ERROR(ValidateNodeDef(def, reg->op_def));
  DataTypeVector in_types, out_types;
  DF_RETURN_IF_ERROR(InOutTypesForNode(def, reg->op_def, &in_types, &out_types));
  std::vector<const Tensor*> v = values;
  v.resize(shapes.size(), nullptr);
  InferenceContext c(def, reg->op_def, in_types, out_types, shapes, v);
  DF_RETURN_IF_ERROR(reg->shape_fn(&c));
  std::vector<std::string> out;
  for (int i = 0; i < c.num_outputs(); ++i) out.push_back(c.output(i).DebugString());
  return out;
}

std::string One(const std::string& op, const std::vector<PartialTensorShape>& shapes,
                const std::vector<test::KernelAttr>& attrs,
                const std::vector<const Tensor*>& values = {}) {
  auto out = Infer(op, shapes, attrs, values);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : "";
}

TEST(MathShapeTest, BroadcastWithUnknownDims) {
  EXPECT_EQ(One("AddV2", {PartialTensorShape({-1, 3}), PartialTensorShape({3})}, {{"T", DT_FLOAT}}),
            "[?,3]");
  EXPECT_EQ(One("Mul", {PartialTensorShape(), PartialTensorShape({3})}, {{"T", DT_FLOAT}}),
            "<unknown>");
  EXPECT_EQ(
      One("Less", {PartialTensorShape({2, 1}), PartialTensorShape({1, -1})}, {{"T", DT_INT32}}),
      "[2,?]");
}

TEST(MathShapeTest, MatMul) {
  EXPECT_EQ(
      One("MatMul", {PartialTensorShape({-1, 3}), PartialTensorShape({3, 5})}, {{"T", DT_FLOAT}}),
      "[?,5]");
  EXPECT_EQ(One("MatMul", {PartialTensorShape({3, -1}), PartialTensorShape({5, 3})},
                {{"T", DT_FLOAT}, {"transpose_a", true}, {"transpose_b", true}}),
            "[?,5]");
  auto out =
      Infer("MatMul", {PartialTensorShape({2, 3}), PartialTensorShape({4, 5})}, {{"T", DT_FLOAT}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("inner dimensions must agree: [2,3] vs [4,5]"));
  out = Infer("MatMul", {PartialTensorShape({2, 3, 4}), PartialTensorShape({4, 5})},
              {{"T", DT_FLOAT}});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MathShapeTest, BatchMatMulV2) {
  EXPECT_EQ(One("BatchMatMulV2", {PartialTensorShape({2, 1, -1, 3}), PartialTensorShape({4, 3, 6})},
                {{"T", DT_FLOAT}}),
            "[2,4,?,6]");
  EXPECT_EQ(One("BatchMatMulV2", {PartialTensorShape(), PartialTensorShape({4, 3, 6})},
                {{"T", DT_FLOAT}}),
            "<unknown>");
}

TEST(MathShapeTest, Reductions) {
  const Tensor axes = test::AsTensor<int32_t>({-1}, {1});
  EXPECT_EQ(One("Sum", {PartialTensorShape({-1, 3, 4}), PartialTensorShape({1})}, {{"T", DT_FLOAT}},
                {nullptr, &axes}),
            "[?,3]");
  EXPECT_EQ(One("Max", {PartialTensorShape({-1, 3, 4}), PartialTensorShape({1})},
                {{"T", DT_FLOAT}, {"keep_dims", true}}, {nullptr, &axes}),
            "[?,3,1]");
  // Unknown axes: rank survives only with keep_dims.
  EXPECT_EQ(One("Mean", {PartialTensorShape({2, 3}), PartialTensorShape({1})},
                {{"T", DT_FLOAT}, {"keep_dims", true}}),
            "[?,?]");
  EXPECT_EQ(One("Mean", {PartialTensorShape({2, 3}), PartialTensorShape({1})}, {{"T", DT_FLOAT}}),
            "<unknown>");
  EXPECT_EQ(One("All", {PartialTensorShape({2, 3}), PartialTensorShape({0})}, {}), "[2,3]");
  const Tensor bad = test::AsTensor<int32_t>({3}, {1});
  auto out = Infer("Sum", {PartialTensorShape({2, 3}), PartialTensorShape({1})}, {{"T", DT_FLOAT}},
                   {nullptr, &bad});
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Invalid reduction dimension 3"));
}

TEST(MathShapeTest, SelectAndArgMax) {
  EXPECT_EQ(
      One("Select",
          {PartialTensorShape({-1}), PartialTensorShape({-1, 4}), PartialTensorShape({3, -1})},
          {{"T", DT_FLOAT}}),
      "[3,4]");
  auto out = Infer(
      "Select", {PartialTensorShape({2}), PartialTensorShape({3, 4}), PartialTensorShape({3, 4})},
      {{"T", DT_FLOAT}});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      One("SelectV2", {PartialTensorShape({2, 1}), PartialTensorShape({3}), PartialTensorShape({})},
          {{"T", DT_FLOAT}}),
      "[2,3]");
  const Tensor dim = Tensor::Scalar<int32_t>(0);
  EXPECT_EQ(One("ArgMax", {PartialTensorShape({-1, 5}), PartialTensorShape({})}, {{"T", DT_FLOAT}},
                {nullptr, &dim}),
            "[5]");
  EXPECT_EQ(One("ArgMin", {PartialTensorShape({-1, 5}), PartialTensorShape({})}, {{"T", DT_FLOAT}}),
            "[?]");
}

TEST(MathShapeTest, AddNMergesInputs) {
  EXPECT_EQ(One("AddN", {PartialTensorShape({-1, 3}), PartialTensorShape({2, -1})},
                {{"T", DT_FLOAT}, {"N", int64_t{2}}}),
            "[2,3]");
}

}  // namespace
}  // namespace distflow
