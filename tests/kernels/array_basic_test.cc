// Const, Placeholder, PlaceholderWithDefault, Identity, IdentityN,
// StopGradient, Shape, Size and Rank.
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

TEST(ConstOpTest, FloatMatrix) {
  Tensor value = AsTensor<float>({1, 2, 3, 4}, {2, 2});
  ExpectTensorEqual(value, RunOne("Const", {}, {{"value", value}, {"dtype", DT_FLOAT}}));
}

TEST(ConstOpTest, ScalarStringAndEmpty) {
  Tensor scalar = Tensor::Scalar<int32_t>(7);
  ExpectTensorEqual(scalar, RunOne("Const", {}, {{"value", scalar}, {"dtype", DT_INT32}}));
  Tensor strings = AsTensor<std::string>({"a", "bc", ""}, {3});
  ExpectTensorEqual(strings, RunOne("Const", {}, {{"value", strings}, {"dtype", DT_STRING}}));
  Tensor empty(DT_FLOAT, TensorShape({0, 3}));
  ExpectTensorEqual(empty, RunOne("Const", {}, {{"value", empty}, {"dtype", DT_FLOAT}}));
  Tensor b = AsTensor<bfloat16>({bfloat16(1.5f), bfloat16(-2.0f)}, {2});
  ExpectTensorEqual(b, RunOne("Const", {}, {{"value", b}, {"dtype", DT_BFLOAT16}}));
}

TEST(ConstOpTest, DtypeMismatch) {
  ExpectInvalid("Const", {}, {{"value", Tensor::Scalar<int32_t>(1)}, {"dtype", DT_FLOAT}},
                "Const value has type int32 but dtype is float32");
}

TEST(PlaceholderOpTest, UnfedIsAnErrorNamingNodeDtypeAndShape) {
  ExpectInvalid("Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({2, -1})}},
                "You must feed a value for placeholder tensor 'test_node' with dtype "
                "float32 and shape [2,?]");
}

TEST(PlaceholderOpTest, UnknownShapeIsLeftOutOfTheMessage) {
  auto out = test::RunKernel("Placeholder", {}, {{"dtype", DT_INT32}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "You must feed a value for placeholder tensor 'test_node' with "
            "dtype int32");
}

TEST(PlaceholderWithDefaultOpTest, PassesInputThrough) {
  Tensor in = AsTensor<float>({1, 2}, {1, 2});
  Tensor out = RunOne("PlaceholderWithDefault", {in},
                      {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({-1, 2})}});
  ExpectTensorEqual(in, out);
  EXPECT_TRUE(out.SharesBufferWith(in));
}

TEST(PlaceholderWithDefaultOpTest, IncompatibleShape) {
  ExpectInvalid("PlaceholderWithDefault", {AsTensor<int32_t>({1, 2})},
                {{"dtype", DT_INT32}, {"shape", PartialTensorShape({3})}},
                "input has shape [2], which is not compatible with the shape attr [3]");
}

TEST(IdentityOpTest, SharesTheBuffer) {
  for (const char* op : {"Identity", "StopGradient"}) {
    Tensor in = AsTensor<int64_t>({1, 2, 3}, {3});
    Tensor out = RunOne(op, {in}, {{"T", DT_INT64}});
    ExpectTensorEqual(in, out);
    EXPECT_TRUE(out.SharesBufferWith(in)) << op;
    Tensor s = AsTensor<std::string>({"x", "y"}, {2});
    ExpectTensorEqual(s, RunOne(op, {s}, {{"T", DT_STRING}}));
    Tensor scalar = Tensor::Scalar<bool>(true);
    ExpectTensorEqual(scalar, RunOne(op, {scalar}, {{"T", DT_BOOL}}));
  }
}

TEST(IdentityNOpTest, EachInputToItsOutput) {
  Tensor a = AsTensor<float>({1.5f}, {1});
  Tensor b = AsTensor<std::string>({"s"}, {1, 1});
  Tensor c(DT_INT32, TensorShape({0}));
  std::vector<Tensor> out =
      RunOk("IdentityN", {a, b, c}, {{"T", std::vector<DataType>{DT_FLOAT, DT_STRING, DT_INT32}}});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensorEqual(a, out[0]);
  ExpectTensorEqual(b, out[1]);
  ExpectTensorEqual(c, out[2]);
  EXPECT_TRUE(out[0].SharesBufferWith(a));
}

TEST(ShapeOpTest, Int32AndInt64) {
  Tensor in(DT_FLOAT, TensorShape({2, 3}));
  ExpectTensorEqual(AsTensor<int32_t>({2, 3}), RunOne("Shape", {in}, {{"T", DT_FLOAT}}));
  ExpectTensorEqual(AsTensor<int64_t>({2, 3}),
                    RunOne("Shape", {in}, {{"T", DT_FLOAT}, {"out_type", DT_INT64}}));
}

TEST(ShapeOpTest, ScalarEmptyAndString) {
  ExpectTensorEqual(Tensor(DT_INT32, TensorShape({0})),
                    RunOne("Shape", {Tensor::Scalar<float>(1)}, {{"T", DT_FLOAT}}));
  ExpectTensorEqual(AsTensor<int32_t>({0, 4}),
                    RunOne("Shape", {Tensor(DT_STRING, TensorShape({0, 4}))}, {{"T", DT_STRING}}));
}

TEST(SizeOpTest, CountsElements) {
  Tensor in(DT_FLOAT, TensorShape({2, 3}));
  ExpectTensorEqual(Tensor::Scalar<int32_t>(6), RunOne("Size", {in}, {{"T", DT_FLOAT}}));
  ExpectTensorEqual(Tensor::Scalar<int64_t>(6),
                    RunOne("Size", {in}, {{"T", DT_FLOAT}, {"out_type", DT_INT64}}));
  ExpectTensorEqual(Tensor::Scalar<int32_t>(1),
                    RunOne("Size", {Tensor::Scalar<int32_t>(5)}, {{"T", DT_INT32}}));
  ExpectTensorEqual(Tensor::Scalar<int32_t>(0),
                    RunOne("Size", {Tensor(DT_BOOL, TensorShape({0, 5}))}, {{"T", DT_BOOL}}));
}

TEST(RankOpTest, CountsDims) {
  ExpectTensorEqual(Tensor::Scalar<int32_t>(3),
                    RunOne("Rank", {Tensor(DT_UINT8, TensorShape({2, 3, 4}))}, {{"T", DT_UINT8}}));
  ExpectTensorEqual(Tensor::Scalar<int32_t>(0),
                    RunOne("Rank", {Tensor::Scalar<std::string>("s")}, {{"T", DT_STRING}}));
}

}  // namespace
}  // namespace distflow
