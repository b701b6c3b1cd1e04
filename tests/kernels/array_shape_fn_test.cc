// Shape functions of the array ops on partial shapes and unknown index
// inputs (the kernel tests cover fully known inputs).
#include <string>
#include <vector>

#include "array_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::InferredShape;

using Shapes = std::vector<PartialTensorShape>;
using Values = std::vector<const Tensor*>;
const PartialTensorShape kUnknown;

TEST(ArrayShapeFnTest, ConstAndPlaceholders) {
  Tensor v(DT_FLOAT, TensorShape({2, 0}));
  EXPECT_EQ(InferredShape("Const", {}, {}, {{"value", v}, {"dtype", DT_FLOAT}}), "[2,0]");
  EXPECT_EQ(InferredShape("Placeholder", {}, {}, {{"dtype", DT_FLOAT}}), "<unknown>");
  EXPECT_EQ(InferredShape("Placeholder", {}, {},
                          {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({-1, 3})}}),
            "[?,3]");
  EXPECT_EQ(InferredShape("PlaceholderWithDefault", {PartialTensorShape({-1})}, {nullptr},
                          {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({3})}}),
            "[3]");
  EXPECT_EQ(InferredShape("PlaceholderWithDefault", {PartialTensorShape({2})}, {nullptr},
                          {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({3})}}),
            "PlaceholderWithDefault input has shape [2], which is not "
            "compatible with the "
            "shape attr [3]");
  EXPECT_EQ(InferredShape("IdentityN", {PartialTensorShape({-1, 2}), kUnknown}, {nullptr, nullptr},
                          {{"T", std::vector<DataType>{DT_FLOAT, DT_INT32}}}, 1),
            "<unknown>");
}

TEST(ArrayShapeFnTest, ShapeSizeRankFill) {
  EXPECT_EQ(InferredShape("Shape", {kUnknown}, {nullptr}, {{"T", DT_FLOAT}}), "[?]");
  EXPECT_EQ(InferredShape("Shape", {PartialTensorShape({2, -1})}, {nullptr}, {{"T", DT_FLOAT}}),
            "[2]");
  EXPECT_EQ(InferredShape("Size", {kUnknown}, {nullptr}, {{"T", DT_FLOAT}}), "[]");
  EXPECT_EQ(InferredShape("Rank", {kUnknown}, {nullptr}, {{"T", DT_FLOAT}}), "[]");
  EXPECT_EQ(InferredShape("Fill", {PartialTensorShape({2}), PartialTensorShape({})},
                          {nullptr, nullptr}, {{"T", DT_FLOAT}}),
            "[?,?]");
  EXPECT_EQ(InferredShape("Fill", {kUnknown, PartialTensorShape({})}, {nullptr, nullptr},
                          {{"T", DT_FLOAT}}),
            "<unknown>");
}

TEST(ArrayShapeFnTest, Reshape) {
  Tensor sizes = AsTensor<int32_t>({-1, 4});
  EXPECT_EQ(InferredShape("Reshape", {PartialTensorShape({-1, 2}), PartialTensorShape({2})},
                          {nullptr, &sizes}, {{"T", DT_FLOAT}}),
            "[?,4]");
  EXPECT_EQ(InferredShape("Reshape", {PartialTensorShape({2, 3}), PartialTensorShape({3})},
                          {nullptr, nullptr}, {{"T", DT_FLOAT}}),
            "[?,?,?]");
  Tensor fixed = AsTensor<int32_t>({2, 3});
  EXPECT_EQ(InferredShape("Reshape", {kUnknown, PartialTensorShape({2})}, {nullptr, &fixed},
                          {{"T", DT_FLOAT}}),
            "[2,3]");
}

TEST(ArrayShapeFnTest, TransposeAndTile) {
  EXPECT_EQ(InferredShape("Transpose", {PartialTensorShape({2, 3}), PartialTensorShape({2})},
                          {nullptr, nullptr}, {{"T", DT_FLOAT}}),
            "[?,?]");
  Tensor perm = AsTensor<int32_t>({1, 0});
  EXPECT_EQ(InferredShape("Transpose", {PartialTensorShape({-1, 3}), PartialTensorShape({2})},
                          {nullptr, &perm}, {{"T", DT_FLOAT}}),
            "[3,?]");
  EXPECT_EQ(InferredShape("Transpose", {kUnknown, PartialTensorShape({2})}, {nullptr, &perm},
                          {{"T", DT_FLOAT}}),
            "[?,?]");
  Tensor multiples = AsTensor<int32_t>({2, 0});
  EXPECT_EQ(InferredShape("Tile", {PartialTensorShape({-1, -1}), PartialTensorShape({2})},
                          {nullptr, &multiples}, {{"T", DT_FLOAT}}),
            "[?,0]");
  EXPECT_EQ(InferredShape("Tile", {PartialTensorShape({2, 3}), PartialTensorShape({2})},
                          {nullptr, nullptr}, {{"T", DT_FLOAT}}),
            "[?,?]");
}

TEST(ArrayShapeFnTest, ConcatPackUnpackSplit) {
  const Shapes two = {PartialTensorShape({-1, 2}), PartialTensorShape({3, 2}),
                      PartialTensorShape({})};
  Tensor axis0 = Tensor::Scalar<int32_t>(0), axis1 = Tensor::Scalar<int32_t>(1);
  const std::vector<test::KernelAttr> attrs = {{"T", DT_FLOAT}, {"N", 2}};
  EXPECT_EQ(InferredShape("ConcatV2", two, {nullptr, nullptr, &axis0}, attrs), "[?,2]");
  EXPECT_EQ(InferredShape("ConcatV2", two, {nullptr, nullptr, &axis1}, attrs), "[3,4]");
  EXPECT_EQ(InferredShape("ConcatV2", two, {nullptr, nullptr, nullptr}, attrs), "[?,?]");
  EXPECT_EQ(
      InferredShape("ConcatV2", {kUnknown, PartialTensorShape({2, 2}), PartialTensorShape({})},
                    {nullptr, nullptr, &axis0}, attrs),
      "[?,2]");
  EXPECT_EQ(InferredShape(
                "ConcatV2",
                {PartialTensorShape({2, -1}), PartialTensorShape({3, -1}), PartialTensorShape({})},
                {nullptr, nullptr, &axis1}, attrs),
            "ConcatV2 inputs must match in every dimension except the concat "
            "axis 1, but "
            "input 0 has shape [2,?] and input 1 has shape [3,?]");
  EXPECT_EQ(InferredShape("Pack", {PartialTensorShape({-1, 2}), PartialTensorShape({3, -1})},
                          {nullptr, nullptr}, {{"T", DT_FLOAT}, {"N", 2}}),
            "[2,3,2]");
  EXPECT_EQ(InferredShape("Unpack", {PartialTensorShape({-1, 3})}, {nullptr},
                          {{"T", DT_FLOAT}, {"num", 2}}, 1),
            "[3]");
  EXPECT_EQ(InferredShape("Split", {PartialTensorShape({}), PartialTensorShape({4, -1})},
                          {nullptr, nullptr}, {{"T", DT_FLOAT}, {"num_split", 2}}, 1),
            "[?,?]");
  EXPECT_EQ(InferredShape("Split", {PartialTensorShape({}), PartialTensorShape({4, -1})},
                          {&axis0, nullptr}, {{"T", DT_FLOAT}, {"num_split", 2}}, 1),
            "[2,?]");
}

TEST(ArrayShapeFnTest, SliceAndStridedSlice) {
  Tensor size = AsTensor<int32_t>({2, -1});
  EXPECT_EQ(
      InferredShape("Slice",
                    {PartialTensorShape({4, 5}), PartialTensorShape({2}), PartialTensorShape({2})},
                    {nullptr, nullptr, &size}, {{"T", DT_FLOAT}, {"Index", DT_INT32}}),
      "[2,?]");
  EXPECT_EQ(InferredShape("Slice", {kUnknown, PartialTensorShape({3}), PartialTensorShape({3})},
                          {nullptr, nullptr, nullptr}, {{"T", DT_FLOAT}, {"Index", DT_INT32}}),
            "[?,?,?]");
  Tensor begin = AsTensor<int32_t>({1, 1}), end = AsTensor<int32_t>({3, 0}),
         strides = AsTensor<int32_t>({1, 1});
  const Shapes shapes = {PartialTensorShape({-1, 4}), PartialTensorShape({2}),
                         PartialTensorShape({2}), PartialTensorShape({2})};
  const Values values = {nullptr, &begin, &end, &strides};
  EXPECT_EQ(InferredShape("StridedSlice", shapes, values,
                          {{"T", DT_FLOAT}, {"Index", DT_INT32}, {"end_mask", 2}}),
            "[?,3]");
  EXPECT_EQ(InferredShape(
                "StridedSlice", shapes, values,
                {{"T", DT_FLOAT}, {"Index", DT_INT32}, {"end_mask", 2}, {"shrink_axis_mask", 1}}),
            "[3]");
  EXPECT_EQ(InferredShape("StridedSlice", shapes, {nullptr, nullptr, &end, &strides},
                          {{"T", DT_FLOAT}, {"Index", DT_INT32}}),
            "<unknown>");
}

TEST(ArrayShapeFnTest, ExpandDimsAndSqueeze) {
  EXPECT_EQ(InferredShape("ExpandDims", {PartialTensorShape({2, 3}), PartialTensorShape({})},
                          {nullptr, nullptr}, {{"T", DT_FLOAT}}),
            "[?,?,?]");
  Tensor dim = Tensor::Scalar<int32_t>(-1);
  EXPECT_EQ(InferredShape("ExpandDims", {PartialTensorShape({-1, 3}), PartialTensorShape({})},
                          {nullptr, &dim}, {{"T", DT_FLOAT}}),
            "[?,3,1]");
  EXPECT_EQ(InferredShape("Squeeze", {PartialTensorShape({1, -1})}, {nullptr}, {{"T", DT_FLOAT}}),
            "<unknown>");
  EXPECT_EQ(InferredShape("Squeeze", {PartialTensorShape({-1, 2})}, {nullptr},
                          {{"T", DT_FLOAT}, {"squeeze_dims", {0}}}),
            "[2]");
}

TEST(ArrayShapeFnTest, GatherOneHotRange) {
  const std::vector<test::KernelAttr> gather = {
      {"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}, {"Taxis", DT_INT32}};
  EXPECT_EQ(
      InferredShape("GatherV2",
                    {PartialTensorShape({3, 4}), PartialTensorShape({5}), PartialTensorShape({})},
                    {nullptr, nullptr, nullptr}, gather),
      "[?,?]");
  Tensor axis = Tensor::Scalar<int32_t>(0);
  EXPECT_EQ(InferredShape(
                "GatherV2",
                {PartialTensorShape({-1, 4}), PartialTensorShape({5, -1}), PartialTensorShape({})},
                {nullptr, nullptr, &axis}, gather),
            "[5,?,4]");
  EXPECT_EQ(InferredShape("OneHot",
                          {PartialTensorShape({3}), PartialTensorShape({}), PartialTensorShape({}),
                           PartialTensorShape({})},
                          {nullptr, nullptr, nullptr, nullptr}, {{"T", DT_FLOAT}}),
            "[3,?]");
  EXPECT_EQ(InferredShape("Range",
                          {PartialTensorShape({}), PartialTensorShape({}), PartialTensorShape({})},
                          {nullptr, nullptr, nullptr}, {}),
            "[?]");
}

}  // namespace
}  // namespace distflow
