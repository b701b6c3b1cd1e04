// Softmax, LogSoftmax and the softmax cross-entropy losses against
// hand-computed values.
#include <cmath>
#include <limits>

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
class SoftmaxTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SoftmaxTest, FloatTypes);

// softmax([1, 2, 3]) = exp(x) / (e + e^2 + e^3); log(e + e^2 + e^3) = 3.4076...
constexpr double kP1 = 0.0900305731704, kP2 = 0.2447284710548, kP3 = 0.6652409557748,
                 kLse123 = 3.4076059644443;

TYPED_TEST(SoftmaxTest, Softmax) {
  auto out = test::RunKernel("Softmax", {Vals<TypeParam>({1, 2, 3}, {3})},
                             {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({kP1, kP2, kP3}, {3}), (*out)[0]);
}

TYPED_TEST(SoftmaxTest, LogSoftmax) {
  auto out = test::RunKernel("LogSoftmax", {Vals<TypeParam>({1, 2, 3}, {3})},
                             {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({1 - kLse123, 2 - kLse123, 3 - kLse123}, {3}), (*out)[0]);
}

TYPED_TEST(SoftmaxTest, LargeLogitsDoNotOverflow) {
  auto out = test::RunKernel("Softmax", {Vals<TypeParam>({1000, 1001, 1002}, {1, 3})},
                             {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({kP1, kP2, kP3}, {1, 3}), (*out)[0]);
  auto log_out = test::RunKernel("LogSoftmax", {Vals<TypeParam>({-1000, -1001, -1002}, {3})},
                                 {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(log_out.ok()) << log_out.status();
  test::ExpectTensorNear(Vals<TypeParam>({3 - kLse123, 2 - kLse123, 1 - kLse123}, {3}),
                         (*log_out)[0]);
}

TYPED_TEST(SoftmaxTest, RowsOfHigherRank) {
  const double ln3 = std::log(3.0);
  auto out = test::RunKernel("Softmax", {Vals<TypeParam>({0, ln3, 5, 5, 1, 2, 3, 4}, {2, 2, 2})},
                             {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  const double a = 0.2689414213699951,
               b = 0.7310585786300049;  // softmax([0,1])
  test::ExpectTensorNear(Vals<TypeParam>({0.25, 0.75, 0.5, 0.5, a, b, a, b}, {2, 2, 2}), (*out)[0]);
}

TYPED_TEST(SoftmaxTest, EmptyRowsAndColumns) {
  for (auto shape : {std::initializer_list<int64_t>{0, 3}, std::initializer_list<int64_t>{2, 0}}) {
    Tensor in = Vals<TypeParam>({}, shape);
    auto out = test::RunKernel("LogSoftmax", {in}, {{"T", DataTypeToEnum<TypeParam>::value}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), in.shape());
  }
}

TEST(SoftmaxTest, ScalarIsRejected) {
  auto out = test::RunKernel("Softmax", {test::AsTensor<float>({1}, {})}, {{"T", DT_FLOAT}});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("rank >= 1"));
  EXPECT_THAT(out.status().message(), HasSubstr("[]"));
}

TEST(SoftmaxTest, Bfloat16) {
  auto out = test::RunKernel("Softmax", {Vals<bfloat16>({1, 2, 3}, {3})}, {{"T", DT_BFLOAT16}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<bfloat16>({kP1, kP2, kP3}, {3}), (*out)[0], 1e-2);
}

// Cross-entropy example: logits [[1, 2, 3], [0, 0, 0]].
//   Row 0, labels [0, 0, 1]: loss = lse - 3 = 0.40760596;
//          backprop = softmax - labels = [p1, p2, p3 - 1].
//   Row 1, labels [.5, .5, 0]: loss = 0.5 ln 3 + 0.5 ln 3 = ln 3;
//          backprop = [1/3 - 1/2, 1/3 - 1/2, 1/3].
const double kLn3 = 1.0986122886681098, kThird = 1.0 / 3.0;

template <typename T>
class XentTest : public ::testing::Test {};
TYPED_TEST_SUITE(XentTest, FloatTypes);

TYPED_TEST(XentTest, DenseLabels) {
  auto out = test::RunKernel("SoftmaxCrossEntropyWithLogits",
                             {Vals<TypeParam>({1, 2, 3, 0, 0, 0}, {2, 3}),
                              Vals<TypeParam>({0, 0, 1, 0.5, 0.5, 0}, {2, 3})},
                             {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({kLse123 - 3, kLn3}, {2}), (*out)[0]);
  test::ExpectTensorNear(
      Vals<TypeParam>({kP1, kP2, kP3 - 1, kThird - 0.5, kThird - 0.5, kThird}, {2, 3}), (*out)[1]);
}

TYPED_TEST(XentTest, LabelsBroadcastAcrossBatch) {
  auto out = test::RunKernel(
      "SoftmaxCrossEntropyWithLogits",
      {Vals<TypeParam>({1, 2, 3, 0, 0, 0}, {2, 3}), Vals<TypeParam>({0, 0, 1}, {1, 3})},
      {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({kLse123 - 3, kLn3}, {2}), (*out)[0]);
  test::ExpectTensorNear(Vals<TypeParam>({kP1, kP2, kP3 - 1, kThird, kThird, kThird - 1}, {2, 3}),
                         (*out)[1]);
}

TYPED_TEST(XentTest, ZeroLabelIgnoresInfiniteLogit) {
  const double inf = std::numeric_limits<double>::infinity();
  auto out = test::RunKernel("SoftmaxCrossEntropyWithLogits",
                             {Vals<TypeParam>({-inf, 0}, {1, 2}), Vals<TypeParam>({0, 1}, {1, 2})},
                             {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<TypeParam>({0}, {1}), (*out)[0]);
  test::ExpectTensorNear(Vals<TypeParam>({0, 0}, {1, 2}), (*out)[1]);
}

TYPED_TEST(XentTest, EmptyBatch) {
  auto out = test::RunKernel("SoftmaxCrossEntropyWithLogits",
                             {Vals<TypeParam>({}, {0, 3}), Vals<TypeParam>({}, {0, 3})},
                             {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape().DebugString(), "[0]");
  EXPECT_EQ((*out)[1].shape().DebugString(), "[0,3]");
}

TYPED_TEST(XentTest, SparseLabels) {
  for (DataType label_type : {DT_INT32, DT_INT64}) {
    Tensor labels = label_type == DT_INT32 ? test::AsTensor<int32_t>({2, 0}, {2})
                                           : test::AsTensor<int64_t>({2, 0}, {2});
    auto out = test::RunKernel("SparseSoftmaxCrossEntropyWithLogits",
                               {Vals<TypeParam>({1, 2, 3, 0, 0, 0}, {2, 3}), labels},
                               {{"T", DataTypeToEnum<TypeParam>::value}, {"Tlabels", label_type}});
    ASSERT_TRUE(out.ok()) << out.status();
    test::ExpectTensorNear(Vals<TypeParam>({kLse123 - 3, kLn3}, {2}), (*out)[0]);
    test::ExpectTensorNear(Vals<TypeParam>({kP1, kP2, kP3 - 1, kThird - 1, kThird, kThird}, {2, 3}),
                           (*out)[1]);
  }
}

TYPED_TEST(XentTest, SparseEmptyBatch) {
  auto out = test::RunKernel("SparseSoftmaxCrossEntropyWithLogits",
                             {Vals<TypeParam>({}, {0, 3}), test::AsTensor<int64_t>({}, {0})},
                             {{"T", DataTypeToEnum<TypeParam>::value}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape().DebugString(), "[0]");
  EXPECT_EQ((*out)[1].shape().DebugString(), "[0,3]");
}

TEST(XentTest, Bfloat16) {
  auto out = test::RunKernel("SoftmaxCrossEntropyWithLogits",
                             {Vals<bfloat16>({1, 2, 3}, {1, 3}), Vals<bfloat16>({0, 0, 1}, {1, 3})},
                             {{"T", DT_BFLOAT16}});
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(Vals<bfloat16>({kLse123 - 3}, {1}), (*out)[0], 1e-2);
}

TEST(XentTest, MismatchedShapesNameBoth) {
  auto out = test::RunKernel(
      "SoftmaxCrossEntropyWithLogits",
      {Vals<float>({1, 2, 3, 4, 5, 6}, {2, 3}), Vals<float>({0, 0, 0, 1, 0, 0, 0, 1}, {2, 4})},
      {{"T", DT_FLOAT}});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("logits shape [2,3]"));
  EXPECT_THAT(out.status().message(), HasSubstr("labels shape [2,4]"));
}

TEST(XentTest, DenseRequiresMatrices) {
  auto out = test::RunKernel("SoftmaxCrossEntropyWithLogits",
                             {Vals<float>({1, 2, 3}, {3}), Vals<float>({0, 0, 1}, {3})},
                             {{"T", DT_FLOAT}});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("2-D"));
  EXPECT_THAT(out.status().message(), HasSubstr("logits shape [3]"));
}

TEST(XentTest, SparseLabelOutOfRange) {
  for (int64_t bad : {3, -1}) {
    auto out = test::RunKernel(
        "SparseSoftmaxCrossEntropyWithLogits",
        {Vals<float>({1, 2, 3, 0, 0, 0}, {2, 3}), test::AsTensor<int64_t>({0, bad}, {2})},
        {{"T", DT_FLOAT}});
    ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(out.status().message(), HasSubstr("label value of " + std::to_string(bad)));
    EXPECT_THAT(out.status().message(), HasSubstr("3 classes"));
  }
}

TEST(XentTest, SparseBatchMismatch) {
  auto out = test::RunKernel(
      "SparseSoftmaxCrossEntropyWithLogits",
      {Vals<double>({1, 2, 3, 0, 0, 0}, {2, 3}), test::AsTensor<int32_t>({0, 1, 2}, {3})},
      {{"T", DT_DOUBLE}, {"Tlabels", DT_INT32}});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("logits shape [2,3]"));
  EXPECT_THAT(out.status().message(), HasSubstr("labels shape [3]"));
}

TEST(XentTest, SparseNeedsAClass) {
  auto out = test::RunKernel("SparseSoftmaxCrossEntropyWithLogits",
                             {Vals<float>({}, {2, 0}), test::AsTensor<int64_t>({0, 0}, {2})},
                             {{"T", DT_FLOAT}});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("at least one class"));
  EXPECT_THAT(out.status().message(), HasSubstr("[2,0]"));
}

}  // namespace
}  // namespace distflow
