// L2Loss against hand-computed values.
#include "gmock/gmock.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

template <typename T>
Tensor Vals(const std::vector<double>& values, std::initializer_list<int64_t> shape) {
  std::vector<T> v(values.begin(), values.end());
  return test::AsTensor<T>(v, shape);
}

using FloatTypes = ::testing::Types<float, double>;

template <typename T>
class L2LossTest : public ::testing::Test {};
TYPED_TEST_SUITE(L2LossTest, FloatTypes);

TYPED_TEST(L2LossTest, HalfSumOfSquares) {
  const DataType dt = DataTypeToEnum<TypeParam>::value;
  auto vec = test::RunKernel("L2Loss", {Vals<TypeParam>({1, 2, 3}, {3})}, {{"T", dt}});
  ASSERT_TRUE(vec.ok()) << vec.status();
  test::ExpectTensorNear(Vals<TypeParam>({7}, {}), (*vec)[0]);
  auto mat = test::RunKernel("L2Loss", {Vals<TypeParam>({1, -2, 3, -4}, {2, 2})}, {{"T", dt}});
  ASSERT_TRUE(mat.ok()) << mat.status();
  test::ExpectTensorNear(Vals<TypeParam>({15}, {}), (*mat)[0]);
  auto scalar = test::RunKernel("L2Loss", {Vals<TypeParam>({3}, {})}, {{"T", dt}});
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  test::ExpectTensorNear(Vals<TypeParam>({4.5}, {}), (*scalar)[0]);
  auto empty = test::RunKernel("L2Loss", {Vals<TypeParam>({}, {0, 5})}, {{"T", dt}});
  ASSERT_TRUE(empty.ok()) << empty.status();
  test::ExpectTensorNear(Vals<TypeParam>({0}, {}), (*empty)[0]);
}

TEST(L2LossTest, Bfloat16) {
  auto out = test::RunKernel("L2Loss", {Vals<bfloat16>({1, 2}, {2})}, {{"T", DT_BFLOAT16}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<bfloat16>({2.5}, {}), (*out)[0]);
}

}  // namespace
}  // namespace distflow
