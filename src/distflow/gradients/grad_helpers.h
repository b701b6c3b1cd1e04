// Building blocks the gradient functions share: summing a broadcast gradient
// back to an operand's shape (the binary-op broadcasting rule), the kept-dims
// shape of a reduction and the broadcast of a reduction's gradient back to
// its input (scalar constants of a dtype are cc/const_op.h's ScalarConst).
// Each builds ops in the
// Scope it is given (errors go to the scope's status, as with every op
// wrapper) and uses static shapes from the scope's ShapeRefiner to skip work
// where the shapes are known. Not thread-safe, like Scope.
#ifndef DISTFLOW_GRADIENTS_GRAD_HELPERS_H_
#define DISTFLOW_GRADIENTS_GRAD_HELPERS_H_

#include <optional>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {
namespace grad {

// The shape of `x` when the scope's shape inference knows it exactly.
std::optional<TensorShape> KnownShape(const Scope& scope, const Output& x);

// The constant value of `x` when shape inference knows it (a Const, or the
// Shape of a fully known tensor); nullptr otherwise.
const Tensor* KnownValue(const Scope& scope, const Output& x);

// `grad`, the gradient of a tensor that `x` was broadcast into, summed over
// the broadcast dimensions and reshaped to x's shape: Reshape(Sum(grad, r),
// Shape(x)) with r from BroadcastGradientArgs. When both shapes are known
// and equal, `grad` itself.
Output SumToShapeOf(const Scope& scope, const Output& grad, const Output& x);

// The int32 shape of `x` reduced over `axes` (int32 or int64, scalar or
// vector, negative counting from the end) with kept dims: reduced dims are 1.
// A Const when x's shape is known and `axes` is a constant.
Output ReducedShape(const Scope& scope, const Output& x, const Output& axes);

// The gradient of a reduction's input: `grad` (the gradient of the reduced
// output) reshaped to the kept-dims shape `kept` and tiled to x's shape.
Output BroadcastToInput(const Scope& scope, const Output& grad, const Output& x,
                        const Output& kept);

}  // namespace grad
}  // namespace distflow

#endif  // DISTFLOW_GRADIENTS_GRAD_HELPERS_H_
