// Numeric checks of the array ops' gradients, in double and float:
// identities, reshaping, Transpose, ConcatV2, Pack/Unpack, Split, Slice,
// StridedSlice (masks, negative strides), StridedSliceGrad, Tile, GatherV2
// (axes, repeated and multi-dimensional indices) and Fill.
#include <vector>

#include "distflow/cc/ops/grad_ops.h"
#include "distflow/cc/ops/standard_ops.h"
#include "grad_test_util.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using test::ExpectGradientsMatch;
using test::Rand;
using test::Unknown;

TEST(ArrayGradTest, IdentityIdentityNAndPlaceholderWithDefault) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        ops::IdentityN both(s, {xs[0], xs[1]});
        return {ops::Identity(s, both[0]),
                ops::Mul(s, both[1], ops::PlaceholderWithDefault(s, xs[0], {2}))};
      },
      {Rand(TensorShape({2})), Rand(TensorShape({2}))});
}

TEST(ArrayGradTest, ReshapeExpandDimsSqueeze) {
  const auto fn = [](const Scope& s, const OutputList& xs) -> OutputList {
    auto r = ops::Reshape(s, xs[0], {3, -1});
    auto e = ops::ExpandDims(s, r, 1);
    return {ops::Square(s, ops::Squeeze(s, e, ops::Squeeze::Axis({1}))),
            ops::Squeeze(s, ops::ExpandDims(s, xs[0], -1))};
  };
  ExpectGradientsMatch(fn, {Rand(TensorShape({2, 3}))});
  ExpectGradientsMatch(fn, {Unknown(Rand(TensorShape({2, 3})))});
}

TEST(ArrayGradTest, Transpose) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Transpose(s, xs[0], {2, 0, 1}),
                ops::Transpose(s, xs[0], Input::Initializer({1, 2, 0}))};
      },
      {Rand(TensorShape({2, 3, 4}))});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Transpose(s, xs[0], Tensor::FromVector<int64_t>(std::vector<int64_t>{1, 0}))};
      },
      {Rand(TensorShape({2, 3}))});
}

TEST(ArrayGradTest, ConcatV2) {
  for (int axis : {0, 1, -1}) {
    SCOPED_TRACE(axis);
    const auto fn = [axis](const Scope& s, const OutputList& xs) -> OutputList {
      return {ops::Concat(s, {xs[0], xs[1], xs[2]}, axis)};
    };
    const TensorShape a = axis == 0 ? TensorShape({1, 3}) : TensorShape({2, 1});
    const TensorShape b = axis == 0 ? TensorShape({2, 3}) : TensorShape({2, 2});
    ExpectGradientsMatch(fn, {Rand(a), Rand(b), Rand(a)});
    ExpectGradientsMatch(fn, {Unknown(Rand(a)), Unknown(Rand(b)), Rand(a)});
  }
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Concat(s, {xs[0], xs[0]}, int64_t{0})};
      },
      {Rand(TensorShape({2}))});
}

TEST(ArrayGradTest, PackAndUnpack) {
  for (int64_t axis : {0, 1, -1}) {
    SCOPED_TRACE(axis);
    ExpectGradientsMatch(
        [axis](const Scope& s, const OutputList& xs) -> OutputList {
          return {ops::Stack(s, {xs[0], xs[1]}, ops::Stack::Axis(axis))};
        },
        {Rand(TensorShape({2, 3})), Rand(TensorShape({2, 3}))});
    ExpectGradientsMatch(
        [axis](const Scope& s, const OutputList& xs) -> OutputList {
          ops::Unstack parts(s, xs[0], 3, ops::Unstack::Axis(axis));
          return parts.output;
        },
        {Rand(TensorShape({3, 3}))});
  }
  // Only some outputs used: the others count as zero.
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        ops::Unstack parts(s, xs[0], 3);
        return {ops::Square(s, parts[1])};
      },
      {Rand(TensorShape({3, 2}))});
}

TEST(ArrayGradTest, Split) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        ops::Split parts(s, 1, xs[0], 2);
        return parts.output;
      },
      {Rand(TensorShape({2, 4}))});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        ops::Split parts(s, -1, xs[0], 3);
        return {ops::Mul(s, parts[2], parts[0])};
      },
      {Unknown(Rand(TensorShape({2, 3})))});
}

TEST(ArrayGradTest, Slice) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Slice(s, xs[0], {1, 0}, {1, 2}), ops::Slice(s, xs[0], {0, 1}, {-1, -1})};
      },
      {Rand(TensorShape({3, 3}))});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Slice(s, xs[0], Tensor::FromVector<int64_t>(std::vector<int64_t>{1}),
                           Tensor::FromVector<int64_t>(std::vector<int64_t>{2}))};
      },
      {Unknown(Rand(TensorShape({4})))});
}

TEST(ArrayGradTest, StridedSlice) {
  using SS = ops::StridedSlice;
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        const Output x = xs[0];
        return {// x[1:3, ::2]
                SS(s, x, {1, 0}, {3, 0}, {1, 2}, SS::EndMask(2)),
                // x[::-1, 1]
                SS(s, x, {0, 1}, {0, 2}, {-1, 1}, SS::BeginMask(1).EndMask(1).ShrinkAxisMask(2)),
                // x[..., newaxis, -1]
                SS(s, x, {0, 0, -1}, {0, 0, 0}, {1, 1, 1},
                   SS::EllipsisMask(1).NewAxisMask(2).ShrinkAxisMask(4)),
                // x[-2:, 3:0:-2]
                SS(s, x, {-2, 3}, {0, 0}, {1, -2}, SS::EndMask(1))};
      },
      {Rand(TensorShape({4, 4}))});
}

TEST(ArrayGradTest, StridedSliceGradIsDifferentiableInDy) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::StridedSliceGrad(s, {4, 3}, {1, 0}, {4, 3}, {2, 2}, xs[0])};
      },
      {Rand(TensorShape({2, 2}))});
}

TEST(ArrayGradTest, Tile) {
  const auto fn = [](const Scope& s, const OutputList& xs) -> OutputList {
    return {ops::Tile(s, xs[0], {2, 1, 3})};
  };
  ExpectGradientsMatch(fn, {Rand(TensorShape({2, 3, 1}))});
  ExpectGradientsMatch(fn, {Unknown(Rand(TensorShape({1, 2, 2})))});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Tile(s, xs[0], Tensor::FromVector<int64_t>(std::vector<int64_t>{3}))};
      },
      {Rand(TensorShape({2}))});
}

TEST(ArrayGradTest, GatherV2) {
  // Axis 0 with repeated indices, axis 1 and -1 with 2-D indices, int64
  // indices, and a params shape only known at run time.
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::GatherV2(s, xs[0], {2, 0, 2, 2}, 0)};
      },
      {Rand(TensorShape({3, 2}))});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {
            ops::GatherV2(s, xs[0], {{1, 0}, {1, 1}}, 1),
            ops::GatherV2(s, xs[0], Tensor::FromVector<int64_t>(std::vector<int64_t>{3, 0}), -1)};
      },
      {Rand(TensorShape({2, 3, 4}))});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Gather(s, xs[0], {1, 1, 0})};
      },
      {Unknown(Rand(TensorShape({2, 2})))});
}

TEST(ArrayGradTest, FillValueGetsTheSum) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        auto scalar = ops::Reshape(s, xs[0], Tensor(DT_INT32, TensorShape({0})));
        return {ops::Mul(s, ops::Fill(s, {2, 3}, scalar), xs[1])};
      },
      {Rand(TensorShape({1})), Rand(TensorShape({2, 3}))});
}

}  // namespace
}  // namespace distflow
