// FusedBatchNormV3 and FusedBatchNormGradV3 against hand-computed values,
// in training and inference mode, and their shape errors.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

Tensor F(std::vector<float> v, std::initializer_list<int64_t> shape) {
  return test::AsTensor<float>(std::move(v), shape);
}

std::vector<test::KernelAttr> Attrs(bool is_training) {
  return {{"T", DT_FLOAT}, {"U", DT_FLOAT}, {"epsilon", 0.0f}, {"is_training", is_training}};
}

// Two rows, two channels: channel 0 holds 1, 3 (mean 2, variance 1),
// channel 1 holds 10, 30 (mean 20, variance 100).
Tensor X() { return F({1, 10, 3, 30}, {2, 1, 1, 2}); }

TEST(FusedBatchNormTest, TrainingUsesTheBatchStatistics) {
  auto out =
      test::RunKernel("FusedBatchNormV3",
                      {X(), F({1, 2}, {2}), F({0, 5}, {2}), F({}, {0}), F({}, {0})}, Attrs(true));
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(F({-1, 3, 1, 7}, {2, 1, 1, 2}), (*out)[0]);
  test::ExpectTensorNear(F({2, 20}, {2}), (*out)[1]);
  test::ExpectTensorNear(F({2, 200}, {2}), (*out)[2]);  // unbiased, for the running value
  test::ExpectTensorNear(F({2, 20}, {2}), (*out)[3]);
  test::ExpectTensorNear(F({1, 100}, {2}), (*out)[4]);  // biased, for the gradient
}

TEST(FusedBatchNormTest, RunningAveragesFollowTheFactor) {
  std::vector<test::KernelAttr> attrs = Attrs(true);
  attrs.push_back({"exponential_avg_factor", 0.5f});
  auto out = test::RunKernel("FusedBatchNormV3",
                             {X(), F({1, 1}, {2}), F({0, 0}, {2}), F({0, 10}, {2}), F({2, 0}, {2})},
                             attrs);
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(F({1, 15}, {2}), (*out)[1]);
  test::ExpectTensorNear(F({2, 100}, {2}), (*out)[2]);
}

TEST(FusedBatchNormTest, InferenceUsesTheGivenStatistics) {
  auto out = test::RunKernel("FusedBatchNormV3",
                             {X(), F({1, 2}, {2}), F({0, 5}, {2}), F({0, 0}, {2}), F({1, 4}, {2})},
                             Attrs(false));
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(F({1, 15, 3, 35}, {2, 1, 1, 2}), (*out)[0]);
}

TEST(FusedBatchNormTest, Gradients) {
  // Training: with dy = x̂ for channel 0, dx = 0 (the gradient of a
  // normalized value along itself vanishes); offset_backprop = sum(dy).
  auto train = test::RunKernel("FusedBatchNormGradV3",
                               {F({-1, 1, 1, 1}, {2, 1, 1, 2}), X(), F({1, 2}, {2}),
                                F({2, 20}, {2}), F({1, 100}, {2}), F({}, {0})},
                               Attrs(true));
  ASSERT_TRUE(train.ok()) << train.status();
  test::ExpectTensorNear(F({0, 0, 0, 0}, {2, 1, 1, 2}), (*train)[0]);
  test::ExpectTensorNear(F({2, 0}, {2}), (*train)[1]);
  test::ExpectTensorNear(F({0, 2}, {2}), (*train)[2]);
  // Inference: dx = dy * scale / sqrt(var).
  auto infer = test::RunKernel("FusedBatchNormGradV3",
                               {F({1, 1, 1, 1}, {2, 1, 1, 2}), X(), F({1, 2}, {2}), F({0, 0}, {2}),
                                F({1, 4}, {2}), F({}, {0})},
                               Attrs(false));
  ASSERT_TRUE(infer.ok()) << infer.status();
  test::ExpectTensorNear(F({1, 1, 1, 1}, {2, 1, 1, 2}), (*infer)[0]);
}

TEST(FusedBatchNormTest, ShapeErrorsNameTheInput) {
  auto bad_scale = test::RunKernel("FusedBatchNormV3",
                                   {X(), F({1, 2, 3}, {3}), F({0, 5}, {2}), F({}, {0}), F({}, {0})},
                                   Attrs(true));
  EXPECT_EQ(bad_scale.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_scale.status().message(), HasSubstr("scale"));
  auto no_stats =
      test::RunKernel("FusedBatchNormV3",
                      {X(), F({1, 2}, {2}), F({0, 5}, {2}), F({}, {0}), F({}, {0})}, Attrs(false));
  EXPECT_EQ(no_stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_stats.status().message(), HasSubstr("mean"));
}

}  // namespace
}  // namespace distflow
