#include "distflow/gradients/grad_helpers.h"

#include <cstdint>
#include <type_traits>
#include <vector>

#include "distflow/cc/const_op.h"
#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/grad_ops.h"
#include "distflow/cc/ops/math_ops.h"
#include "distflow/core/status.h"

namespace distflow {
namespace grad {

std::optional<TensorShape> KnownShape(const Scope& scope, const Output& x) {
  TensorShape shape;
  if (x.node() == nullptr ||
      !scope.refiner()->OutputShape(x.node(), x.index()).AsTensorShape(&shape)) {
    return std::nullopt;
  }
  return shape;
}

const Tensor* KnownValue(const Scope& scope, const Output& x) {
  if (x.node() == nullptr) return nullptr;
  return scope.refiner()->ConstantValue(x.node(), x.index());
}

Output SumToShapeOf(const Scope& scope, const Output& grad, const Output& x) {
  const std::optional<TensorShape> x_shape = KnownShape(scope, x);
  const std::optional<TensorShape> grad_shape = KnownShape(scope, grad);
  if (x_shape && grad_shape && *x_shape == *grad_shape) return grad;
  const Output shape = ops::Shape(scope, x);
  const ops::BroadcastGradientArgs axes(scope, shape, ops::Shape(scope, grad));
  return ops::Reshape(scope, ops::Sum(scope, grad, axes.r0), shape);
}

namespace {

// The reduced dims of a rank-`rank` tensor; false when `axes` is not a known
// constant.
bool KnownReducedDims(const Tensor* axes, int rank, std::vector<bool>* dims) {
  if (axes == nullptr) return false;
  std::vector<int64_t> values;
  if (axes->dtype() == DT_INT32) {
    for (int32_t v : axes->flat<int32_t>()) values.push_back(v);
  } else if (axes->dtype() == DT_INT64) {
    for (int64_t v : axes->flat<int64_t>()) values.push_back(v);
  } else {
    return false;
  }
  dims->assign(rank, false);
  for (int64_t v : values) {
    if (v < -rank || v >= rank) return false;
    (*dims)[v < 0 ? v + rank : v] = true;
  }
  return true;
}

}  // namespace

Output ReducedShape(const Scope& scope, const Output& x, const Output& axes) {
  const std::optional<TensorShape> x_shape = KnownShape(scope, x);
  std::vector<bool> reduced;
  if (x_shape && KnownReducedDims(KnownValue(scope, axes), x_shape->dims(), &reduced)) {
    std::vector<int32_t> kept;
    for (int d = 0; d < x_shape->dims(); ++d) {
      kept.push_back(reduced[d] ? 1 : static_cast<int32_t>(x_shape->dim_size(d)));
    }
    return ops::Const(
        scope, Tensor::FromVector<int32_t>(absl::Span<const int32_t>(kept),
                                           TensorShape({static_cast<int64_t>(kept.size())})));
  }
  // mask[d] = 1 where d is reduced: one-hot rows of the (wrapped) axes,
  // summed; kept = shape * (1 - mask) + mask.
  const Output rank = ops::Rank(scope, x);
  Output axes32 = BaseType(axes.type()) == DT_INT32 ? axes : ops::Cast(scope, axes, DT_INT32);
  axes32 = ops::FloorMod(scope, ops::Reshape(scope, axes32, {-1}), rank);
  const Output mask =
      ops::Minimum(scope, ops::Sum(scope, ops::OneHot(scope, axes32, rank, 1, 0), 0), 1);
  return ops::AddV2(scope, ops::Mul(scope, ops::Shape(scope, x), ops::Sub(scope, 1, mask)), mask);
}

Output BroadcastToInput(const Scope& scope, const Output& grad, const Output& x,
                        const Output& kept) {
  const Output reshaped = ops::Reshape(scope, grad, kept);
  const std::optional<TensorShape> x_shape = KnownShape(scope, x);
  const Tensor* kept_value = KnownValue(scope, kept);
  if (x_shape && kept_value != nullptr) {
    std::vector<int32_t> multiples;
    auto k = kept_value->flat<int32_t>();
    for (int d = 0; d < x_shape->dims(); ++d) {
      multiples.push_back(k[d] == 0 ? 1 : static_cast<int32_t>(x_shape->dim_size(d) / k[d]));
    }
    return ops::Tile(scope, reshaped, Tensor::FromVector<int32_t>(multiples));
  }
  const Output multiples = ops::FloorDiv(scope, ops::Shape(scope, x), ops::Maximum(scope, kept, 1));
  return ops::Tile(scope, reshaped, multiples);
}

}  // namespace grad
}  // namespace distflow
