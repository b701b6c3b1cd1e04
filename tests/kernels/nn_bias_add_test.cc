// BiasAdd and BiasAddGrad against hand-computed values.
#include "gmock/gmock.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

template <typename T>
Tensor Vals(const std::vector<double>& values, std::initializer_list<int64_t> shape) {
  std::vector<T> v(values.begin(), values.end());
  return test::AsTensor<T>(v, shape);
}

template <typename T>
class BiasAddTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BiasAddTest, FloatTypes);

TYPED_TEST(BiasAddTest, Matrix) {
  auto out = test::RunKernel(
      "BiasAdd", {Vals<TypeParam>({1, 2, 3, 4, 5, 6}, {2, 3}), Vals<TypeParam>({10, 20, 30}, {3})},
      {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({11, 22, 33, 14, 25, 36}, {2, 3}), (*out)[0]);
}

TYPED_TEST(BiasAddTest, Nhwc4D) {
  auto out = test::RunKernel(
      "BiasAdd", {Vals<TypeParam>({1, 2, 3, 4}, {1, 2, 1, 2}), Vals<TypeParam>({10, 20}, {2})},
      {{"T", DataTypeToEnum<TypeParam>::value}, {"data_format", "NHWC"}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({11, 22, 13, 24}, {1, 2, 1, 2}), (*out)[0]);
}

TYPED_TEST(BiasAddTest, Nchw) {
  // N = 2, C = 2, W = 2: the bias follows dimension 1.
  auto out = test::RunKernel(
      "BiasAdd",
      {Vals<TypeParam>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2}), Vals<TypeParam>({100, 200}, {2})},
      {{"T", DataTypeToEnum<TypeParam>::value}, {"data_format", "NCHW"}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({100, 101, 202, 203, 104, 105, 206, 207}, {2, 2, 2}),
                         (*out)[0]);
}

TYPED_TEST(BiasAddTest, EmptyBatch) {
  auto out =
      test::RunKernel("BiasAdd", {Vals<TypeParam>({}, {0, 3}), Vals<TypeParam>({1, 2, 3}, {3})},
                      {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape().DebugString(), "[0,3]");
}

TYPED_TEST(BiasAddTest, GradNhwc) {
  auto out = test::RunKernel("BiasAddGrad", {Vals<TypeParam>({1, 2, 3, 4, 5, 6}, {2, 3})},
                             {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({5, 7, 9}, {3}), (*out)[0]);
}

TYPED_TEST(BiasAddTest, GradNchw) {
  // Channel 0 holds 0, 1, 4, 5; channel 1 holds 2, 3, 6, 7.
  auto out = test::RunKernel("BiasAddGrad", {Vals<TypeParam>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2})},
                             {{"T", DataTypeToEnum<TypeParam>::value}, {"data_format", "NCHW"}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({10, 18}, {2}), (*out)[0]);
}

TYPED_TEST(BiasAddTest, GradEmptyBatchIsZero) {
  auto out = test::RunKernel("BiasAddGrad", {Vals<TypeParam>({}, {0, 3})},
                             {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({0, 0, 0}, {3}), (*out)[0]);
}

TEST(BiasAddTest, Bfloat16) {
  auto out =
      test::RunKernel("BiasAdd", {Vals<bfloat16>({1, 2}, {1, 2}), Vals<bfloat16>({0.5, -1}, {2})},
                      {{"T", DT_BFLOAT16}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<bfloat16>({1.5, 1}, {1, 2}), (*out)[0]);
}

TEST(BiasAddTest, BiasLengthMismatchNamesBothShapes) {
  auto out = test::RunKernel(
      "BiasAdd", {Vals<float>({1, 2, 3, 4, 5, 6}, {2, 3}), Vals<float>({1, 2, 3, 4}, {4})},
      {{"T", DT_FLOAT}});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("bias shape [4]"));
  EXPECT_THAT(out.status().message(), HasSubstr("value shape [2,3]"));
  // NCHW takes the channels from dimension 1, so a bias matching the last
  // dimension is wrong there.
  auto nchw = test::RunKernel(
      "BiasAdd", {Vals<float>({1, 2, 3, 4, 5, 6}, {1, 2, 3}), Vals<float>({1, 2, 3}, {3})},
      {{"T", DT_FLOAT}, {"data_format", "NCHW"}});
  ASSERT_EQ(nchw.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(nchw.status().message(), HasSubstr("value shape [1,2,3]"));
}

TEST(BiasAddTest, BadRanks) {
  auto matrix_bias = test::RunKernel(
      "BiasAdd", {Vals<float>({1, 2}, {1, 2}), Vals<float>({1, 2}, {1, 2})}, {{"T", DT_FLOAT}});
  ASSERT_EQ(matrix_bias.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(matrix_bias.status().message(), HasSubstr("1-D"));
  auto vector_value = test::RunKernel(
      "BiasAdd", {Vals<float>({1, 2}, {2}), Vals<float>({1, 2}, {2})}, {{"T", DT_FLOAT}});
  ASSERT_EQ(vector_value.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(vector_value.status().message(), HasSubstr("at least 2-D"));
  auto grad = test::RunKernel("BiasAddGrad", {Vals<float>({1, 2}, {2})}, {{"T", DT_FLOAT}});
  ASSERT_EQ(grad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(grad.status().message(), HasSubstr("[2]"));
}

TEST(BiasAddTest, UnknownDataFormat) {
  auto out = test::RunKernel("BiasAdd", {Vals<float>({1, 2}, {1, 2}), Vals<float>({1, 2}, {2})},
                             {{"T", DT_FLOAT}, {"data_format", "NDHWC"}});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace distflow
