// Transpose and Tile.
#include <string>
#include <vector>

#include "array_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectInvalid;
using test::ExpectTensorEqual;
using test::RunOne;

Tensor Transpose(const Tensor& in, std::vector<int32_t> perm) {
  return RunOne("Transpose", {in, AsTensor<int32_t>(perm)}, {{"T", in.dtype()}});
}

TEST(TransposeOpTest, Matrix) {
  ExpectTensorEqual(AsTensor<float>({1, 4, 2, 5, 3, 6}, {3, 2}),
                    Transpose(AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}), {1, 0}));
  ExpectTensorEqual(AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}),
                    Transpose(AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}), {0, 1}));
}

TEST(TransposeOpTest, ThreeDims) {
  std::vector<int32_t> in(24);
  for (int i = 0; i < 24; ++i) in[i] = i;
  // out[i][j][k] = in[j][k][i] for perm {2, 0, 1}.
  std::vector<int32_t> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) want.push_back(j * 12 + k * 4 + i);
  ExpectTensorEqual(AsTensor<int32_t>(want, {4, 2, 3}),
                    Transpose(AsTensor<int32_t>(in, {2, 3, 4}), {2, 0, 1}));
  // Swapping the outer dims keeps rows of 4 contiguous: out[i][j] = in[j][i].
  std::vector<int32_t> want2;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 4; ++k) want2.push_back(j * 12 + i * 4 + k);
  ExpectTensorEqual(AsTensor<int32_t>(want2, {3, 2, 4}),
                    Transpose(AsTensor<int32_t>(in, {2, 3, 4}), {1, 0, 2}));
}

TEST(TransposeOpTest, LargeBlockedShapes) {
  // Sizes that are not multiples of the copy's tile size, and a reversal of
  // three dims whose source-contiguous dim ends up first.
  const int a = 37, b = 45;
  std::vector<int32_t> in(a * b), want(a * b);
  for (int i = 0; i < a * b; ++i) in[i] = i;
  for (int i = 0; i < b; ++i)
    for (int j = 0; j < a; ++j) want[i * a + j] = in[j * b + i];
  ExpectTensorEqual(AsTensor<int32_t>(want, {b, a}),
                    Transpose(AsTensor<int32_t>(in, {a, b}), {1, 0}));
  std::vector<int64_t> in3(5 * 7 * 9), want3;
  for (size_t i = 0; i < in3.size(); ++i) in3[i] = static_cast<int64_t>(i);
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 7; ++j)
      for (int k = 0; k < 5; ++k) want3.push_back(k * 63 + j * 9 + i);
  ExpectTensorEqual(AsTensor<int64_t>(want3, {9, 7, 5}),
                    Transpose(AsTensor<int64_t>(in3, {5, 7, 9}), {2, 1, 0}));
  std::vector<std::string> s(20 * 3), want_s;
  for (size_t i = 0; i < s.size(); ++i) s[i] = std::to_string(i);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 20; ++j) want_s.push_back(std::to_string(j * 3 + i));
  ExpectTensorEqual(AsTensor<std::string>(want_s, {3, 20}),
                    Transpose(AsTensor<std::string>(s, {20, 3}), {1, 0}));
}

TEST(TransposeOpTest, EveryElementSize) {
  ExpectTensorEqual(AsTensor<std::string>({"a", "c", "b", "d"}, {2, 2}),
                    Transpose(AsTensor<std::string>({"a", "b", "c", "d"}, {2, 2}), {1, 0}));
  ExpectTensorEqual(test::AsBoolTensor({true, false, true, false}, {2, 2}),
                    Transpose(test::AsBoolTensor({true, true, false, false}, {2, 2}), {1, 0}));
  ExpectTensorEqual(AsTensor<uint8_t>({1, 3, 2, 4}, {2, 2}),
                    Transpose(AsTensor<uint8_t>({1, 2, 3, 4}, {2, 2}), {1, 0}));
  ExpectTensorEqual(
      AsTensor<bfloat16>({bfloat16(1.0f), bfloat16(3.0f), bfloat16(2.0f), bfloat16(4.0f)}, {2, 2}),
      Transpose(AsTensor<bfloat16>({bfloat16(1.0f), bfloat16(2.0f), bfloat16(3.0f), bfloat16(4.0f)},
                                   {2, 2}),
                {1, 0}));
  ExpectTensorEqual(
      AsTensor<double>({1, 3, 2, 4}, {2, 2}),
      RunOne("Transpose", {AsTensor<double>({1, 2, 3, 4}, {2, 2}), AsTensor<int64_t>({1, 0})},
             {{"T", DT_DOUBLE}, {"Tperm", DT_INT64}}));
}

TEST(TransposeOpTest, ScalarsEmptyAndSizeOneDims) {
  ExpectTensorEqual(Tensor::Scalar<float>(3), Transpose(Tensor::Scalar<float>(3), {}));
  ExpectTensorEqual(Tensor(DT_FLOAT, TensorShape({2, 0})),
                    Transpose(Tensor(DT_FLOAT, TensorShape({0, 2})), {1, 0}));
  Tensor row = AsTensor<int64_t>({1, 2, 3}, {1, 3});
  Tensor col = Transpose(row, {1, 0});
  ExpectTensorEqual(AsTensor<int64_t>({1, 2, 3}, {3, 1}), col);
  EXPECT_TRUE(col.SharesBufferWith(row));
}

TEST(TransposeOpTest, Errors) {
  Tensor m = AsTensor<float>({1, 2, 3, 4}, {2, 2});
  ExpectInvalid("Transpose", {m, AsTensor<int32_t>({0, 0})}, {{"T", DT_FLOAT}},
                "perm [0,0] is not a permutation of [0, 2): 0 appears twice");
  ExpectInvalid("Transpose", {m, AsTensor<int32_t>({0, 2})}, {{"T", DT_FLOAT}},
                "perm [0,2] is not a permutation of [0, 2): 2 is out of range");
  ExpectInvalid("Transpose", {m, AsTensor<int32_t>({-1, 0})}, {{"T", DT_FLOAT}},
                "-1 is out of range");
  ExpectInvalid("Transpose", {m, AsTensor<int32_t>({0, 1, 2})}, {{"T", DT_FLOAT}},
                "perm [0,1,2] has 3 entries but the input has rank 2");
}

Tensor Tile(const Tensor& in, std::vector<int32_t> multiples) {
  return RunOne("Tile", {in, AsTensor<int32_t>(multiples)}, {{"T", in.dtype()}});
}

TEST(TileOpTest, RepeatsAlongEachDim) {
  Tensor m = AsTensor<int32_t>({1, 2, 3, 4}, {2, 2});
  ExpectTensorEqual(AsTensor<int32_t>({1, 2, 3, 4, 1, 2, 3, 4}, {4, 2}), Tile(m, {2, 1}));
  ExpectTensorEqual(AsTensor<int32_t>({1, 2, 1, 2, 3, 4, 3, 4}, {2, 4}), Tile(m, {1, 2}));
  ExpectTensorEqual(AsTensor<int32_t>({1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4}, {4, 4}),
                    Tile(m, {2, 2}));
  ExpectTensorEqual(AsTensor<float>({1, 2, 1, 2, 1, 2}), Tile(AsTensor<float>({1, 2}), {3}));
  ExpectTensorEqual(AsTensor<float>({5, 5, 5}, {3, 1}), Tile(AsTensor<float>({5}, {1, 1}), {3, 1}));
  ExpectTensorEqual(AsTensor<int64_t>({1, 2, 1, 2}, {2, 2}),
                    RunOne("Tile", {AsTensor<int64_t>({1, 2}, {1, 2}), AsTensor<int64_t>({2, 1})},
                           {{"T", DT_INT64}, {"Tmultiples", DT_INT64}}));
}

TEST(TileOpTest, StringsScalarsAndEmpty) {
  ExpectTensorEqual(AsTensor<std::string>({"a", "b", "a", "b"}, {4}),
                    Tile(AsTensor<std::string>({"a", "b"}), {2}));
  ExpectTensorEqual(Tensor::Scalar<float>(2), Tile(Tensor::Scalar<float>(2), {}));
  ExpectTensorEqual(Tensor(DT_FLOAT, TensorShape({0, 4})),
                    Tile(AsTensor<float>({1, 2, 3, 4}, {2, 2}), {0, 2}));
  ExpectTensorEqual(Tensor(DT_FLOAT, TensorShape({0, 6})),
                    Tile(Tensor(DT_FLOAT, TensorShape({0, 2})), {3, 3}));
  Tensor in = AsTensor<float>({1, 2});
  EXPECT_TRUE(Tile(in, {1}).SharesBufferWith(in));
}

TEST(TileOpTest, Errors) {
  Tensor m = AsTensor<float>({1, 2, 3, 4}, {2, 2});
  ExpectInvalid("Tile", {m, AsTensor<int32_t>({-1, 1})}, {{"T", DT_FLOAT}},
                "Tile multiples[0] = -1 must be non-negative");
  ExpectInvalid("Tile", {m, AsTensor<int32_t>({2})}, {{"T", DT_FLOAT}},
                "Tile multiples [2] need one entry per input dimension, but "
                "the input has "
                "shape [2,2]");
}

}  // namespace
}  // namespace distflow
