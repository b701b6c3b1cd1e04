// Relu, Relu6, Elu, Softplus and their gradients against hand-computed values.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// A tensor of T holding `values` (given as doubles) with `shape`.
template <typename T>
Tensor Vals(const std::vector<double>& values, std::initializer_list<int64_t> shape) {
  std::vector<T> v(values.begin(), values.end());
  return test::AsTensor<T>(v, shape);
}

// Runs a one-output op with attr T = DataTypeToEnum<T>.
template <typename T>
absl::StatusOr<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& inputs) {
  auto out = test::RunKernel(op, inputs, {{"T", DataTypeToEnum<T>::value}});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

template <typename T>
class ActivationTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ActivationTest, FloatTypes);

TYPED_TEST(ActivationTest, Relu) {
  auto out = RunOp<TypeParam>("Relu", {Vals<TypeParam>({-2, -0.5, 0, 0.5, 3}, {5})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({0, 0, 0, 0.5, 3}, {5}), *out);
}

TYPED_TEST(ActivationTest, Relu6) {
  auto out = RunOp<TypeParam>("Relu6", {Vals<TypeParam>({-1, 0, 3, 6, 8}, {5})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({0, 0, 3, 6, 6}, {5}), *out);
}

TYPED_TEST(ActivationTest, Elu) {
  auto out = RunOp<TypeParam>("Elu", {Vals<TypeParam>({-1, 0, 2}, {3})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({-0.6321205588, 0, 2}, {3}), *out);
}

TYPED_TEST(ActivationTest, Softplus) {
  auto out = RunOp<TypeParam>("Softplus", {Vals<TypeParam>({-1, 0, 1, 50, -50}, {5})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(
      Vals<TypeParam>({0.3132616875, 0.6931471806, 1.3132616875, 50, 1.9287498479e-22}, {5}), *out);
}

TYPED_TEST(ActivationTest, ReluGrad) {
  auto out = RunOp<TypeParam>("ReluGrad", {Vals<TypeParam>({1, 2, 3, 4}, {2, 2}),
                                           Vals<TypeParam>({-1, 0, 0.5, 7}, {2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({0, 0, 3, 4}, {2, 2}), *out);
}

TYPED_TEST(ActivationTest, Relu6Grad) {
  auto out = RunOp<TypeParam>(
      "Relu6Grad", {Vals<TypeParam>({1, 2, 3, 4, 5}, {5}), Vals<TypeParam>({-1, 0, 3, 6, 7}, {5})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({0, 0, 3, 0, 0}, {5}), *out);
}

TYPED_TEST(ActivationTest, EluGradUsesOutputs) {
  auto out = RunOp<TypeParam>(
      "EluGrad", {Vals<TypeParam>({1, 2, 3}, {3}), Vals<TypeParam>({-0.5, 0, 2}, {3})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({0.5, 2, 3}, {3}), *out);
}

TYPED_TEST(ActivationTest, SoftplusGradIsSigmoid) {
  const double ln3 = std::log(3.0);
  auto out = RunOp<TypeParam>(
      "SoftplusGrad", {Vals<TypeParam>({1, 2, 4}, {3}), Vals<TypeParam>({0, ln3, -ln3}, {3})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({0.5, 1.5, 1}, {3}), *out);
}

TYPED_TEST(ActivationTest, ScalarAndEmpty) {
  auto scalar = RunOp<TypeParam>("Relu", {test::AsTensor<TypeParam>({-3}, {})});
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  test::ExpectTensorNear(test::AsTensor<TypeParam>({0}, {}), *scalar);
  auto empty = RunOp<TypeParam>("Elu", {Vals<TypeParam>({}, {0, 4})});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape().DebugString(), "[0,4]");
  auto empty_grad =
      RunOp<TypeParam>("SoftplusGrad", {Vals<TypeParam>({}, {0}), Vals<TypeParam>({}, {0})});
  ASSERT_TRUE(empty_grad.ok()) << empty_grad.status();
  EXPECT_EQ(empty_grad->NumElements(), 0);
}

TYPED_TEST(ActivationTest, LargeInputRunsInParallel) {
  const int64_t n = 1 << 16;
  std::vector<double> x(n), expected(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = (i % 2 == 0) ? -static_cast<double>(i) : static_cast<double>(i);
    expected[i] = std::max(x[i], 0.0);
  }
  std::vector<TypeParam> xv(x.begin(), x.end()), ev(expected.begin(), expected.end());
  auto out = RunOp<TypeParam>("Relu", {test::AsTensor<TypeParam>(xv, {n})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorEqual(test::AsTensor<TypeParam>(ev, {n}), *out);
}

TEST(ActivationTest, ReluPropagatesNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = RunOp<float>("Relu", {test::AsTensor<float>({nan, -1}, {2})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(test::AsTensor<float>({nan, 0}, {2}), *out);
}

TEST(ActivationTest, Bfloat16) {
  auto out = RunOp<bfloat16>("Relu6", {Vals<bfloat16>({-1, 2.5, 9}, {3})});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<bfloat16>({0, 2.5, 6}, {3}), *out);
  auto elu = RunOp<bfloat16>("Elu", {Vals<bfloat16>({-1, 1}, {2})});
  ASSERT_TRUE(elu.ok()) << elu.status();
  test::ExpectTensorNear(Vals<bfloat16>({-0.6321205588, 1}, {2}), *elu, 1e-2);
}

TEST(ActivationTest, GradShapeMismatchNamesBothShapes) {
  auto out = RunOp<float>("ReluGrad", {Vals<float>({1, 2}, {2}), Vals<float>({1, 2, 3}, {3})});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("gradients shape [2]"));
  EXPECT_THAT(out.status().message(), HasSubstr("features shape [3]"));
  auto elu = RunOp<double>("EluGrad", {Vals<double>({1, 2}, {1, 2}), Vals<double>({1, 2}, {2, 1})});
  ASSERT_EQ(elu.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(elu.status().message(), HasSubstr("outputs shape [2,1]"));
}

TEST(ActivationTest, IntegerTypeHasNoKernel) {
  auto out = RunOp<int32_t>("Relu", {test::AsTensor<int32_t>({-1, 1}, {2})});
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace distflow
