// Reshape, ExpandDims and Squeeze: shape changes that share the input buffer.
#include <string>
#include <vector>

#include "array_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectInvalid;
using test::ExpectTensorEqual;
using test::RunOne;

Tensor Iota(int n, std::initializer_list<int64_t> shape) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return AsTensor<float>(v, shape);
}

Tensor Reshape(const Tensor& in, std::vector<int32_t> sizes) {
  return RunOne("Reshape", {in, AsTensor<int32_t>(sizes)}, {{"T", in.dtype()}});
}

TEST(ReshapeOpTest, KnownSizesSharesBuffer) {
  Tensor in = Iota(6, {2, 3});
  Tensor out = Reshape(in, {3, 2});
  ExpectTensorEqual(Iota(6, {3, 2}), out);
  EXPECT_TRUE(out.SharesBufferWith(in));
}

TEST(ReshapeOpTest, InfersOneSize) {
  Tensor in = Iota(6, {2, 3});
  ExpectTensorEqual(Iota(6, {6}), Reshape(in, {-1}));
  ExpectTensorEqual(Iota(6, {3, 2}), Reshape(in, {3, -1}));
  ExpectTensorEqual(Iota(6, {1, 6, 1}), Reshape(in, {1, -1, 1}));
}

TEST(ReshapeOpTest, ScalarsEmptyInt64AndStrings) {
  ExpectTensorEqual(Tensor::Scalar<float>(1), Reshape(Iota(1, {1, 1}), {}));
  ExpectTensorEqual(Iota(1, {1}), Reshape(Tensor::Scalar<float>(1), {1}));
  ExpectTensorEqual(Tensor(DT_FLOAT, TensorShape({3, 0})),
                    Reshape(Tensor(DT_FLOAT, TensorShape({0, 3})), {3, 0}));
  Tensor s = AsTensor<std::string>({"a", "b", "c", "d"}, {4});
  ExpectTensorEqual(AsTensor<std::string>({"a", "b", "c", "d"}, {2, 2}), Reshape(s, {2, -1}));
  ExpectTensorEqual(Iota(6, {2, 3}), RunOne("Reshape", {Iota(6, {6}), AsTensor<int64_t>({2, 3})},
                                            {{"T", DT_FLOAT}, {"Tshape", DT_INT64}}));
}

TEST(ReshapeOpTest, Errors) {
  auto shape = [](std::vector<int32_t> v) { return AsTensor<int32_t>(v); };
  ExpectInvalid("Reshape", {Iota(6, {2, 3}), shape({4, 2})}, {{"T", DT_FLOAT}},
                "Cannot reshape a tensor with 6 elements to shape [4,2] (8 elements)");
  ExpectInvalid("Reshape", {Iota(6, {2, 3}), shape({-1, -1})}, {{"T", DT_FLOAT}},
                "only one dimension of the new shape may be -1, but [-1,-1] has -1 at "
                "both 0 and 1");
  ExpectInvalid("Reshape", {Iota(7, {7}), shape({-1, 2})}, {{"T", DT_FLOAT}},
                "Cannot reshape a tensor with 7 elements to shape [-1,2]: 7 is not a "
                "multiple of 2");
  ExpectInvalid("Reshape", {Iota(6, {6}), shape({-2, -3})}, {{"T", DT_FLOAT}},
                "negative size -2 at dimension 0");
  ExpectInvalid("Reshape", {Tensor(DT_FLOAT, TensorShape({0, 2})), shape({0, -1})},
                {{"T", DT_FLOAT}}, "the -1 dimension cannot be inferred");
  ExpectInvalid("Reshape", {Iota(4, {4}), AsTensor<int32_t>({2, 2}, {1, 2})}, {{"T", DT_FLOAT}},
                "must be rank 1");
}

TEST(ExpandDimsOpTest, InsertsADimOfOne) {
  Tensor in = Iota(6, {2, 3});
  auto expand = [&](const Tensor& t, int32_t dim) {
    return RunOne("ExpandDims", {t, Tensor::Scalar<int32_t>(dim)}, {{"T", t.dtype()}});
  };
  ExpectTensorEqual(Iota(6, {1, 2, 3}), expand(in, 0));
  ExpectTensorEqual(Iota(6, {2, 1, 3}), expand(in, 1));
  ExpectTensorEqual(Iota(6, {2, 3, 1}), expand(in, 2));
  ExpectTensorEqual(Iota(6, {2, 3, 1}), expand(in, -1));
  ExpectTensorEqual(Iota(6, {1, 2, 3}), expand(in, -3));
  ExpectTensorEqual(Iota(1, {1}), expand(Tensor::Scalar<float>(1), 0));
  Tensor out = expand(in, 0);
  EXPECT_TRUE(out.SharesBufferWith(in));
  // A one-element vector dim of type int64 works too.
  ExpectTensorEqual(
      AsTensor<std::string>({"a", "b"}, {2, 1}),
      RunOne("ExpandDims", {AsTensor<std::string>({"a", "b"}), AsTensor<int64_t>({1})},
             {{"T", DT_STRING}, {"Tdim", DT_INT64}}));
}

TEST(ExpandDimsOpTest, Errors) {
  ExpectInvalid("ExpandDims", {Iota(6, {2, 3}), Tensor::Scalar<int32_t>(3)}, {{"T", DT_FLOAT}},
                "dim 3 is out of range for a rank-2 tensor, expected [-3, 2]");
  ExpectInvalid("ExpandDims", {Iota(6, {2, 3}), Tensor::Scalar<int32_t>(-4)}, {{"T", DT_FLOAT}},
                "dim -4 is out of range");
  ExpectInvalid("ExpandDims", {Iota(6, {2, 3}), AsTensor<int32_t>({0, 1})}, {{"T", DT_FLOAT}},
                "ExpandDims dim must hold a single value, got shape [2]");
}

TEST(SqueezeOpTest, AllOrListedDims) {
  Tensor in = Iota(6, {1, 2, 1, 3});
  ExpectTensorEqual(Iota(6, {2, 3}), RunOne("Squeeze", {in}, {{"T", DT_FLOAT}}));
  ExpectTensorEqual(Iota(6, {2, 1, 3}),
                    RunOne("Squeeze", {in}, {{"T", DT_FLOAT}, {"squeeze_dims", {0}}}));
  ExpectTensorEqual(Iota(6, {1, 2, 3}),
                    RunOne("Squeeze", {in}, {{"T", DT_FLOAT}, {"squeeze_dims", {-2}}}));
  ExpectTensorEqual(Iota(6, {2, 3}),
                    RunOne("Squeeze", {in}, {{"T", DT_FLOAT}, {"squeeze_dims", {2, 0}}}));
  Tensor out = RunOne("Squeeze", {in}, {{"T", DT_FLOAT}});
  EXPECT_TRUE(out.SharesBufferWith(in));
  ExpectTensorEqual(Tensor::Scalar<int32_t>(4),
                    RunOne("Squeeze", {AsTensor<int32_t>({4}, {1, 1})}, {{"T", DT_INT32}}));
  ExpectTensorEqual(
      Tensor(DT_STRING, TensorShape({0})),
      RunOne("Squeeze", {Tensor(DT_STRING, TensorShape({1, 0}))}, {{"T", DT_STRING}}));
}

TEST(SqueezeOpTest, Errors) {
  ExpectInvalid("Squeeze", {Iota(6, {1, 2, 1, 3})}, {{"T", DT_FLOAT}, {"squeeze_dims", {1}}},
                "Can not squeeze dim[1], expected a dimension of 1, got 2");
  ExpectInvalid("Squeeze", {Iota(6, {1, 2, 1, 3})}, {{"T", DT_FLOAT}, {"squeeze_dims", {4}}},
                "squeeze_dims entry 4 is out of range for a rank-4 tensor, "
                "expected [-4, 4)");
}

}  // namespace
}  // namespace distflow
