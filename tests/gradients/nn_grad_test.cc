// Numeric checks of the neural-network ops' gradients, in double and float:
// activations, BiasAdd in both data formats, Softmax, LogSoftmax, both
// softmax cross-entropy losses (also through their backprop output, and
// with broadcast labels) and L2Loss.
#include <vector>

#include "distflow/cc/ops/standard_ops.h"
#include "grad_test_util.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using test::ExpectGradientsMatch;
using test::Rand;
using test::Spread;
using test::Values;

TEST(NnGradTest, Relu) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList { return {ops::Relu(s, xs[0])}; },
      {Spread(TensorShape({2, 4}))});
}

TEST(NnGradTest, Relu6) {
  // Values on both sides of 0 and of 6, away from the kinks.
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList { return {ops::Relu6(s, xs[0])}; },
      {Spread(TensorShape({2, 5}), -2, 8)});
}

TEST(NnGradTest, Elu) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList { return {ops::Elu(s, xs[0])}; },
      {Spread(TensorShape({2, 4}), -2, 2)});
}

TEST(NnGradTest, Softplus) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList { return {ops::Softplus(s, xs[0])}; },
      {Rand(TensorShape({2, 4}), -3, 3)});
}

TEST(NnGradTest, BiasAdd) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::BiasAdd(s, xs[0], xs[1])};
      },
      {Rand(TensorShape({2, 3, 4})), Rand(TensorShape({4}))});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::BiasAdd(s, xs[0], xs[1], ops::BiasAdd::DataFormat("NCHW"))};
      },
      {Rand(TensorShape({2, 3, 2, 2})), Rand(TensorShape({3}))});
}

TEST(NnGradTest, SoftmaxAndLogSoftmax) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Softmax(s, xs[0]), ops::LogSoftmax(s, xs[0])};
      },
      {Rand(TensorShape({2, 4}), -2, 2)});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList { return {ops::Softmax(s, xs[0])}; },
      {Rand(TensorShape({2, 2, 3}), -2, 2)});
}

TEST(NnGradTest, SoftmaxCrossEntropyWithLogits) {
  // Labels are a distribution per row (not required for the gradient).
  const auto labels = Values(TensorShape({2, 3}), {0.2, 0.5, 0.3, 1, 0, 0});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::SoftmaxCrossEntropyWithLogits(s, xs[0], xs[1]).loss};
      },
      {Rand(TensorShape({2, 3}), -2, 2), labels});
  // Through the backprop output too (a second-order path).
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        ops::SoftmaxCrossEntropyWithLogits xent(s, xs[0], xs[1]);
        return {xent.loss, xent.backprop};
      },
      {Rand(TensorShape({2, 3}), -2, 2), labels});
  // Labels broadcast over the batch.
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::SoftmaxCrossEntropyWithLogits(s, xs[0], xs[1]).loss};
      },
      {Rand(TensorShape({3, 3}), -2, 2), Values(TensorShape({1, 3}), {0.1, 0.6, 0.3})});
}

TEST(NnGradTest, SparseSoftmaxCrossEntropyWithLogits) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        ops::SparseSoftmaxCrossEntropyWithLogits xent(s, xs[0], {2, 0, 1});
        return {xent.loss};
      },
      {Rand(TensorShape({3, 4}), -2, 2)});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        ops::SparseSoftmaxCrossEntropyWithLogits xent(
            s, xs[0], Tensor::FromVector<int64_t>(std::vector<int64_t>{1, 3}));
        return {xent.loss, xent.backprop};
      },
      {Rand(TensorShape({2, 4}), -2, 2)});
}

TEST(NnGradTest, L2Loss) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList { return {ops::L2Loss(s, xs[0])}; },
      {Rand(TensorShape({2, 3}))});
}

}  // namespace
}  // namespace distflow
