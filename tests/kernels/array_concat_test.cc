// ConcatV2, Pack, Unpack and Split.
#include <string>
#include <vector>

#include "array_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectInvalid;
using test::ExpectTensorEqual;
using test::RunOk;
using test::RunOne;

Tensor Concat(std::vector<Tensor> values, int32_t axis) {
  const DataType dtype = values[0].dtype();
  const int n = static_cast<int>(values.size());
  values.push_back(Tensor::Scalar<int32_t>(axis));
  return RunOne("ConcatV2", values, {{"T", dtype}, {"N", n}});
}

TEST(ConcatV2OpTest, AlongEachAxis) {
  Tensor a = AsTensor<float>({1, 2, 3, 4}, {2, 2});
  Tensor b = AsTensor<float>({5, 6, 7, 8}, {2, 2});
  ExpectTensorEqual(AsTensor<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}), Concat({a, b}, 0));
  ExpectTensorEqual(AsTensor<float>({1, 2, 5, 6, 3, 4, 7, 8}, {2, 4}), Concat({a, b}, 1));
  ExpectTensorEqual(AsTensor<float>({1, 2, 5, 6, 3, 4, 7, 8}, {2, 4}), Concat({a, b}, -1));
  ExpectTensorEqual(AsTensor<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}), Concat({a, b}, -2));
}

TEST(ConcatV2OpTest, UnequalSizesEmptyInputsAndStrings) {
  ExpectTensorEqual(
      AsTensor<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}),
      Concat({AsTensor<int32_t>({1, 4}, {2, 1}), AsTensor<int32_t>({2, 3, 5, 6}, {2, 2}),
              Tensor(DT_INT32, TensorShape({2, 0}))},
             1));
  ExpectTensorEqual(
      Tensor(DT_INT32, TensorShape({0, 3})),
      Concat({Tensor(DT_INT32, TensorShape({0, 1})), Tensor(DT_INT32, TensorShape({0, 2}))}, 1));
  ExpectTensorEqual(AsTensor<std::string>({"a", "b", "c"}),
                    Concat({AsTensor<std::string>({"a"}), AsTensor<std::string>({"b", "c"})}, 0));
  ExpectTensorEqual(
      AsTensor<int64_t>({1, 2}),
      RunOne("ConcatV2",
             {AsTensor<int64_t>({1}), AsTensor<int64_t>({2}), Tensor::Scalar<int64_t>(0)},
             {{"T", DT_INT64}, {"N", 2}, {"Tidx", DT_INT64}}));
}

TEST(ConcatV2OpTest, Errors) {
  auto run = [](std::vector<Tensor> v, int32_t axis, const std::string& msg) {
    const int n = static_cast<int>(v.size());
    v.push_back(Tensor::Scalar<int32_t>(axis));
    ExpectInvalid("ConcatV2", v, {{"T", DT_FLOAT}, {"N", n}}, msg);
  };
  Tensor a(DT_FLOAT, TensorShape({2, 3}));
  run({a, Tensor(DT_FLOAT, TensorShape({3, 3}))}, 1,
      "ConcatV2 inputs must match in every dimension except the concat axis 1, "
      "but input 0 "
      "has shape [2,3] and input 1 has shape [3,3]");
  run({a, Tensor(DT_FLOAT, TensorShape({2}))}, 0,
      "ConcatV2 inputs must have the same rank, but input 0 has shape [2,3] "
      "and input 1 has "
      "shape [2]");
  run({a, a}, 2, "concat axis 2 is out of range for a rank-2 tensor, expected [-2, 2)");
  run({a, a}, -3, "concat axis -3 is out of range");
  run({Tensor::Scalar<float>(1), Tensor::Scalar<float>(2)}, 0, "cannot concatenate scalars");
}

TEST(PackOpTest, AlongEachAxis) {
  Tensor a = AsTensor<int32_t>({1, 2});
  Tensor b = AsTensor<int32_t>({3, 4});
  Tensor c = AsTensor<int32_t>({5, 6});
  ExpectTensorEqual(AsTensor<int32_t>({1, 2, 3, 4, 5, 6}, {3, 2}),
                    RunOne("Pack", {a, b, c}, {{"T", DT_INT32}, {"N", 3}}));
  ExpectTensorEqual(AsTensor<int32_t>({1, 3, 5, 2, 4, 6}, {2, 3}),
                    RunOne("Pack", {a, b, c}, {{"T", DT_INT32}, {"N", 3}, {"axis", 1}}));
  ExpectTensorEqual(AsTensor<int32_t>({1, 3, 5, 2, 4, 6}, {2, 3}),
                    RunOne("Pack", {a, b, c}, {{"T", DT_INT32}, {"N", 3}, {"axis", -1}}));
}

TEST(PackOpTest, ScalarsStringsAndEmpty) {
  ExpectTensorEqual(AsTensor<float>({1, 2}),
                    RunOne("Pack", {Tensor::Scalar<float>(1), Tensor::Scalar<float>(2)},
                           {{"T", DT_FLOAT}, {"N", 2}}));
  ExpectTensorEqual(
      AsTensor<std::string>({"a", "c", "b", "d"}, {2, 2}),
      RunOne("Pack", {AsTensor<std::string>({"a", "b"}), AsTensor<std::string>({"c", "d"})},
             {{"T", DT_STRING}, {"N", 2}, {"axis", 1}}));
  ExpectTensorEqual(Tensor(DT_FLOAT, TensorShape({0, 1})),
                    RunOne("Pack", {Tensor(DT_FLOAT, TensorShape({0}))},
                           {{"T", DT_FLOAT}, {"N", 1}, {"axis", 1}}));
}

TEST(PackOpTest, Errors) {
  ExpectInvalid("Pack", {AsTensor<float>({1, 2}), AsTensor<float>({1, 2, 3})},
                {{"T", DT_FLOAT}, {"N", 2}},
                "Pack inputs must all have the same shape, but input 0 has shape [2] and "
                "input 1 has shape [3]");
  ExpectInvalid("Pack", {AsTensor<float>({1, 2}), AsTensor<float>({3, 4})},
                {{"T", DT_FLOAT}, {"N", 2}, {"axis", 2}},
                "Pack axis 2 is out of range for rank-1 inputs, expected [-2, 1]");
}

TEST(UnpackOpTest, AlongEachAxis) {
  Tensor in = AsTensor<int32_t>({1, 2, 3, 4, 5, 6}, {3, 2});
  std::vector<Tensor> rows = RunOk("Unpack", {in}, {{"T", DT_INT32}, {"num", 3}});
  ASSERT_EQ(rows.size(), 3u);
  ExpectTensorEqual(AsTensor<int32_t>({1, 2}), rows[0]);
  ExpectTensorEqual(AsTensor<int32_t>({3, 4}), rows[1]);
  ExpectTensorEqual(AsTensor<int32_t>({5, 6}), rows[2]);
  std::vector<Tensor> cols = RunOk("Unpack", {in}, {{"T", DT_INT32}, {"num", 2}, {"axis", -1}});
  ASSERT_EQ(cols.size(), 2u);
  ExpectTensorEqual(AsTensor<int32_t>({1, 3, 5}), cols[0]);
  ExpectTensorEqual(AsTensor<int32_t>({2, 4, 6}), cols[1]);
}

TEST(UnpackOpTest, AlignedRowsShareTheBuffer) {
  // Rows of 16 int32 start on 64-byte boundaries; rows of 2 do not.
  Tensor wide = test::Iota32({3, 16});
  std::vector<Tensor> rows = RunOk("Unpack", {wide}, {{"T", DT_INT32}, {"num", 3}});
  ASSERT_EQ(rows.size(), 3u);
  ExpectTensorEqual(test::Iota32({16}), rows[0]);
  EXPECT_TRUE(rows[1].SharesBufferWith(wide));
  EXPECT_TRUE(rows[2].SharesBufferWith(wide));
  Tensor narrow = test::Iota32({3, 2});
  rows = RunOk("Unpack", {narrow}, {{"T", DT_INT32}, {"num", 3}});
  ASSERT_EQ(rows.size(), 3u);
  ExpectTensorEqual(AsTensor<int32_t>({2, 3}), rows[1]);
  EXPECT_FALSE(rows[1].SharesBufferWith(narrow));
}

TEST(UnpackOpTest, ScalarsStringsAndEmpty) {
  std::vector<Tensor> out =
      RunOk("Unpack", {AsTensor<std::string>({"a", "b"})}, {{"T", DT_STRING}, {"num", 2}});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual(Tensor::Scalar<std::string>("a"), out[0]);
  ExpectTensorEqual(Tensor::Scalar<std::string>("b"), out[1]);
  EXPECT_TRUE(
      RunOk("Unpack", {Tensor(DT_FLOAT, TensorShape({0, 2}))}, {{"T", DT_FLOAT}, {"num", 0}})
          .empty());
  out = RunOk("Unpack", {Tensor(DT_FLOAT, TensorShape({0, 2}))},
              {{"T", DT_FLOAT}, {"num", 2}, {"axis", 1}});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual(Tensor(DT_FLOAT, TensorShape({0})), out[1]);
}

TEST(UnpackOpTest, Errors) {
  Tensor in(DT_FLOAT, TensorShape({3, 2}));
  ExpectInvalid("Unpack", {in}, {{"T", DT_FLOAT}, {"num", 2}},
                "Unpack with num 2 needs dimension 0 of size 2, but the input "
                "has shape [3,2]");
  ExpectInvalid("Unpack", {in}, {{"T", DT_FLOAT}, {"num", 3}, {"axis", 2}},
                "Unpack axis 2 is out of range for a rank-2 tensor, expected [-2, 2)");
}

std::vector<Tensor> Split(int32_t dim, const Tensor& in, int num) {
  return RunOk("Split", {Tensor::Scalar<int32_t>(dim), in},
               {{"T", in.dtype()}, {"num_split", num}});
}

TEST(SplitOpTest, LeadingDim) {
  Tensor in = AsTensor<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  std::vector<Tensor> out = Split(0, in, 2);
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual(AsTensor<float>({1, 2, 3, 4}, {2, 2}), out[0]);
  ExpectTensorEqual(AsTensor<float>({5, 6, 7, 8}, {2, 2}), out[1]);
  // The second piece starts 16 bytes in, so it is a copy, not a view.
  EXPECT_FALSE(out[1].SharesBufferWith(in));
}

TEST(SplitOpTest, AlignedPiecesShareTheBuffer) {
  Tensor in = test::Iota32({4, 16});
  std::vector<Tensor> out = Split(0, in, 4);
  ASSERT_EQ(out.size(), 4u);
  ExpectTensorEqual(test::Iota32({1, 16}), out[0]);
  for (const Tensor& piece : out) EXPECT_TRUE(piece.SharesBufferWith(in));
}

TEST(SplitOpTest, InnerDims) {
  Tensor in = AsTensor<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  std::vector<Tensor> out = Split(1, in, 2);
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual(AsTensor<int32_t>({1, 2, 5, 6}, {2, 2}), out[0]);
  ExpectTensorEqual(AsTensor<int32_t>({3, 4, 7, 8}, {2, 2}), out[1]);
  out = Split(-1, in, 4);
  ASSERT_EQ(out.size(), 4u);
  ExpectTensorEqual(AsTensor<int32_t>({4, 8}, {2, 1}), out[3]);
  out = Split(1, in, 1);
  ASSERT_EQ(out.size(), 1u);
  ExpectTensorEqual(in, out[0]);
}

TEST(SplitOpTest, StringsAndEmpty) {
  std::vector<Tensor> out = Split(0, AsTensor<std::string>({"a", "b", "c"}), 3);
  ASSERT_EQ(out.size(), 3u);
  ExpectTensorEqual(AsTensor<std::string>({"c"}), out[2]);
  out = Split(1, Tensor(DT_FLOAT, TensorShape({0, 4})), 2);
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual(Tensor(DT_FLOAT, TensorShape({0, 2})), out[0]);
}

TEST(SplitOpTest, Errors) {
  ExpectInvalid("Split", {Tensor::Scalar<int32_t>(0), Tensor(DT_FLOAT, TensorShape({5, 2}))},
                {{"T", DT_FLOAT}, {"num_split", 2}},
                "Number of ways to split should evenly divide the split dimension, but "
                "got "
                "split_dim 0 (size = 5) and num_split 2");
  ExpectInvalid("Split", {Tensor::Scalar<int32_t>(2), Tensor(DT_FLOAT, TensorShape({4, 2}))},
                {{"T", DT_FLOAT}, {"num_split", 2}},
                "split_dim 2 is out of range for a rank-2 tensor, expected [-2, 2)");
}

}  // namespace
}  // namespace distflow
