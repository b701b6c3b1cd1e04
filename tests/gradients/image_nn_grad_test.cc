// Numeric checks of the image ops' gradients, in double and float: Conv2D
// (SAME and VALID padding, strides 1 and 2, both inputs), MaxPool (distinct
// values, so the maximum of each window is unique) and AvgPool, including
// windows clipped by SAME padding; FusedBatchNormV3 in both modes.
#include <vector>

#include "distflow/cc/ops/image_nn_ops.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/gradients/gradient_checker.h"
#include "grad_test_util.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using test::ExpectGradientsMatch;
using test::Rand;
using test::Spread;

TEST(ImageNnGradTest, Conv2DSameStride1) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Conv2D(s, xs[0], xs[1], {1, 1, 1, 1}, "SAME")};
      },
      {Rand(TensorShape({2, 4, 5, 3})), Rand(TensorShape({3, 3, 3, 2}))});
}

TEST(ImageNnGradTest, Conv2DValidStride2) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Conv2D(s, xs[0], xs[1], {1, 2, 2, 1}, "VALID")};
      },
      {Rand(TensorShape({2, 7, 6, 2})), Rand(TensorShape({3, 2, 2, 3}))});
}

TEST(ImageNnGradTest, Conv2DSameStride2) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Conv2D(s, xs[0], xs[1], {1, 2, 2, 1}, "SAME")};
      },
      {Rand(TensorShape({1, 5, 6, 2})), Rand(TensorShape({2, 3, 2, 2}))});
}

TEST(ImageNnGradTest, MaxPool) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::MaxPool(s, xs[0], {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"),
                ops::MaxPool(s, xs[0], {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME")};
      },
      {Spread(TensorShape({2, 5, 4, 2}))});
}

TEST(ImageNnGradTest, AvgPool) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::AvgPool(s, xs[0], {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"),
                ops::AvgPool(s, xs[0], {1, 3, 3, 1}, {1, 2, 1, 1}, "SAME")};
      },
      {Rand(TensorShape({2, 5, 4, 2}))});
}

// FusedBatchNormV3 exists for float only, so it is checked in float here
// (not through ExpectGradientsMatch, which also checks double).
TEST(ImageNnGradTest, FusedBatchNormV3) {
  for (bool is_training : {true, false}) {
    Scope root = Scope::NewRootScope();
    auto x = ops::Placeholder(root, DT_FLOAT);
    auto scale = ops::Placeholder(root, DT_FLOAT);
    auto offset = ops::Placeholder(root, DT_FLOAT);
    ops::FusedBatchNormV3::Attrs attrs;
    attrs.is_training = is_training;
    attrs.epsilon = 0.001f;
    auto mean = ops::Const(root, {0.1f, -0.2f, 0.3f});
    auto variance = ops::Const(root, {1.0f, 2.0f, 0.5f});
    ops::FusedBatchNormV3 bn(root, x, scale, offset, mean, variance, attrs);
    // Values from [-1, 1): the training-mode variance is well away from 0.
    Tensor xv(DT_FLOAT, TensorShape({2, 2, 2, 3}));
    for (int64_t i = 0; i < xv.NumElements(); ++i) {
      xv.flat<float>()[i] = static_cast<float>((i * 7) % 11) / 5.5f - 1.0f;
    }
    double max_error = 0;
    absl::Status s = ComputeGradientError(root, {x, scale, offset},
                                          {xv, Tensor::FromVector<float>({1.0f, 0.5f, 2.0f}),
                                           Tensor::FromVector<float>({0.0f, 1.0f, -1.0f})},
                                          {bn.y}, {TensorShape({2, 2, 2, 3})}, &max_error);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_LT(max_error, 2e-2) << "is_training " << is_training;
  }
}

}  // namespace
}  // namespace distflow
