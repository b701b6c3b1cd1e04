// Numeric checks of the image ops' gradients, in double and float: Conv2D
// (SAME and VALID padding, strides 1 and 2, both inputs), MaxPool (distinct
// values, so the maximum of each window is unique) and AvgPool, including
// windows clipped by SAME padding.
#include <vector>

#include "distflow/cc/ops/image_nn_ops.h"
#include "distflow/cc/ops/standard_ops.h"
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

}  // namespace
}  // namespace distflow
