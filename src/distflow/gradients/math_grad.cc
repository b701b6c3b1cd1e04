// Gradient functions of the math ops: elementwise arithmetic (with the
// broadcasting rule: each operand's gradient is summed back to its shape),
// unary math, MatMul and BatchMatMulV2, AddN, Cast, Select/SelectV2 and the
// reductions. Ops whose outputs do not vary smoothly with their inputs
// (comparisons, logic, ArgMax/ArgMin, FloorDiv, ...) are registered as not
// differentiable.
//
// Prod's gradient is grad * prod / x, which is exact for inputs without
// zeros; a zero input gives NaN/inf there (TensorFlow computes exclusive
// cumulative products instead, which distflow has no kernel for).
#include <algorithm>
#include <optional>
#include <vector>

#include "distflow/cc/const_op.h"
#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/grad_ops.h"
#include "distflow/cc/ops/math_ops.h"
#include "distflow/core/status.h"
#include "distflow/gradients/grad_helpers.h"
#include "distflow/gradients/grad_op_registry.h"
#include "distflow/gradients/gradients.h"

namespace distflow {
namespace {

using grad::SumToShapeOf;
using ops::ScalarConst;

// Unary ops: grad_inputs[0] is dL/dy, op.input(0) is x, op.output(0) is y.

absl::Status NegGrad(const Scope& scope, const Operation& /*op*/,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::Neg(scope, grad_inputs[0]));
  return scope.status();
}
REGISTER_GRADIENT_OP("Neg", NegGrad);

absl::Status AbsGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], ops::Sign(scope, op.input(0))));
  return scope.status();
}
REGISTER_GRADIENT_OP("Abs", AbsGrad);

absl::Status SignGrad(const Scope& scope, const Operation& op,
                      const std::vector<Output>& /*grad_inputs*/,
                      std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::ZerosLike(scope, op.input(0)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Sign", SignGrad);

absl::Status SquareGrad(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output x = op.input(0);
  const Output two_x = ops::Mul(scope, ScalarConst(scope, 2, op.input_type(0)), x);
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], two_x));
  return scope.status();
}
REGISTER_GRADIENT_OP("Square", SquareGrad);

absl::Status SqrtGradFn(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::SqrtGrad(scope, op.output(0), grad_inputs[0]));
  return scope.status();
}
REGISTER_GRADIENT_OP("Sqrt", SqrtGradFn);

absl::Status RsqrtGradFn(const Scope& scope, const Operation& op,
                         const std::vector<Output>& grad_inputs,
                         std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::RsqrtGrad(scope, op.output(0), grad_inputs[0]));
  return scope.status();
}
REGISTER_GRADIENT_OP("Rsqrt", RsqrtGradFn);

absl::Status ExpGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], op.output(0)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Exp", ExpGrad);

absl::Status LogGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::RealDiv(scope, grad_inputs[0], op.input(0)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Log", LogGrad);

absl::Status TanhGradFn(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::TanhGrad(scope, op.output(0), grad_inputs[0]));
  return scope.status();
}
REGISTER_GRADIENT_OP("Tanh", TanhGradFn);

absl::Status SigmoidGradFn(const Scope& scope, const Operation& op,
                           const std::vector<Output>& grad_inputs,
                           std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::SigmoidGrad(scope, op.output(0), grad_inputs[0]));
  return scope.status();
}
REGISTER_GRADIENT_OP("Sigmoid", SigmoidGradFn);

// d(1/x) = -dy * y^2.
absl::Status ReciprocalGrad(const Scope& scope, const Operation& op,
                            const std::vector<Output>& grad_inputs,
                            std::vector<Output>* grad_outputs) {
  const Output y = op.output(0);
  grad_outputs->push_back(ops::Mul(scope, ops::Neg(scope, grad_inputs[0]), ops::Mul(scope, y, y)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Reciprocal", ReciprocalGrad);

// d sin(x) = dy * cos(x); d cos(x) = -dy * sin(x).
absl::Status SinGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], ops::Cos(scope, op.input(0))));
  return scope.status();
}
REGISTER_GRADIENT_OP("Sin", SinGrad);

absl::Status CosGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(
      ops::Neg(scope, ops::Mul(scope, grad_inputs[0], ops::Sin(scope, op.input(0)))));
  return scope.status();
}
REGISTER_GRADIENT_OP("Cos", CosGrad);

// d ln(1 + x) = dy / (1 + x).
absl::Status Log1pGrad(const Scope& scope, const Operation& op,
                       const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output x = op.input(0);
  grad_outputs->push_back(
      ops::RealDiv(scope, grad_inputs[0], ops::AddV2(scope, ScalarConst(scope, 1, x.type()), x)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Log1p", Log1pGrad);

// d (e^x - 1) = dy * (y + 1).
absl::Status Expm1Grad(const Scope& scope, const Operation& op,
                       const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output y = op.output(0);
  grad_outputs->push_back(
      ops::Mul(scope, grad_inputs[0], ops::AddV2(scope, y, ScalarConst(scope, 1, y.type()))));
  return scope.status();
}
REGISTER_GRADIENT_OP("Expm1", Expm1Grad);

// d erf(x) = dy * 2 / sqrt(pi) * e^(-x^2).
absl::Status ErfGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output x = op.input(0);
  const Output slope = ops::Mul(scope, ScalarConst(scope, 1.1283791670955126, x.type()),
                                ops::Exp(scope, ops::Neg(scope, ops::Square(scope, x))));
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], slope));
  return scope.status();
}
REGISTER_GRADIENT_OP("Erf", ErfGrad);

// Binary ops with broadcasting: the gradients for the broadcast result are
// summed back to each operand's shape.

absl::Status BroadcastBack(const Scope& scope, const Operation& op, const Output& gx,
                           const Output& gy, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(SumToShapeOf(scope, gx, op.input(0)));
  grad_outputs->push_back(SumToShapeOf(scope, gy, op.input(1)));
  return scope.status();
}

absl::Status AddGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  return BroadcastBack(scope, op, grad_inputs[0], grad_inputs[0], grad_outputs);
}
REGISTER_GRADIENT_OP("Add", AddGrad);
REGISTER_GRADIENT_OP("AddV2", AddGrad);

absl::Status SubGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  return BroadcastBack(scope, op, grad_inputs[0], ops::Neg(scope, grad_inputs[0]), grad_outputs);
}
REGISTER_GRADIENT_OP("Sub", SubGrad);

absl::Status MulGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output& g = grad_inputs[0];
  return BroadcastBack(scope, op, ops::Mul(scope, g, op.input(1)), ops::Mul(scope, op.input(0), g),
                       grad_outputs);
}
REGISTER_GRADIENT_OP("Mul", MulGrad);

// d(x/y) = dz / y, -dz * x / y^2. Integer division is not differentiable.
absl::Status DivGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output x = op.input(0);
  const Output y = op.input(1);
  if (!DataTypeIsFloating(op.input_type(0))) {
    grad_outputs->assign(2, NoGradient());
    return absl::OkStatus();
  }
  const Output& g = grad_inputs[0];
  const Output gy =
      ops::RealDiv(scope, ops::RealDiv(scope, ops::Mul(scope, ops::Neg(scope, g), x), y), y);
  return BroadcastBack(scope, op, ops::RealDiv(scope, g, y), gy, grad_outputs);
}
REGISTER_GRADIENT_OP("Div", DivGrad);
REGISTER_GRADIENT_OP("RealDiv", DivGrad);

// d(x^y) = dz * y * x^(y-1), dz * z * log(x) (taken as 0 where x <= 0).
absl::Status PowGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output x = op.input(0);
  const Output y = op.input(1);
  const Output z = op.output(0);
  const Output& g = grad_inputs[0];
  const DataType t = op.input_type(0);
  const Output one = ScalarConst(scope, 1, t);
  const Output gx =
      ops::Mul(scope, g, ops::Mul(scope, y, ops::Pow(scope, x, ops::Sub(scope, y, one))));
  const Output positive = ops::Greater(scope, x, ScalarConst(scope, 0, t));
  const Output log_x = ops::SelectV2(
      scope, positive, ops::Log(scope, ops::SelectV2(scope, positive, x, ops::OnesLike(scope, x))),
      ops::ZerosLike(scope, x));
  const Output gy = ops::Mul(scope, g, ops::Mul(scope, z, log_x));
  return BroadcastBack(scope, op, gx, gy, grad_outputs);
}
REGISTER_GRADIENT_OP("Pow", PowGrad);

// Maximum / Minimum pass the gradient to the operand that was picked; ties
// go to x, as in TensorFlow.
absl::Status MaximumMinimumGrad(const Scope& scope, const Operation& op,
                                const std::vector<Output>& grad_inputs, const Output& x_picked,
                                std::vector<Output>* grad_outputs) {
  const Output& g = grad_inputs[0];
  const Output zeros = ops::ZerosLike(scope, g);
  return BroadcastBack(scope, op, ops::SelectV2(scope, x_picked, g, zeros),
                       ops::SelectV2(scope, x_picked, zeros, g), grad_outputs);
}

absl::Status MaximumGrad(const Scope& scope, const Operation& op,
                         const std::vector<Output>& grad_inputs,
                         std::vector<Output>* grad_outputs) {
  return MaximumMinimumGrad(scope, op, grad_inputs,
                            ops::GreaterEqual(scope, op.input(0), op.input(1)), grad_outputs);
}
REGISTER_GRADIENT_OP("Maximum", MaximumGrad);

absl::Status MinimumGrad(const Scope& scope, const Operation& op,
                         const std::vector<Output>& grad_inputs,
                         std::vector<Output>* grad_outputs) {
  return MaximumMinimumGrad(scope, op, grad_inputs, ops::LessEqual(scope, op.input(0), op.input(1)),
                            grad_outputs);
}
REGISTER_GRADIENT_OP("Minimum", MinimumGrad);

// d((x-y)^2) = 2 dz (x-y), -2 dz (x-y).
absl::Status SquaredDifferenceGrad(const Scope& scope, const Operation& op,
                                   const std::vector<Output>& grad_inputs,
                                   std::vector<Output>* grad_outputs) {
  const Output x = op.input(0);
  const Output y = op.input(1);
  const Output gx =
      ops::Mul(scope, ops::Mul(scope, ScalarConst(scope, 2, op.input_type(0)), grad_inputs[0]),
               ops::Sub(scope, x, y));
  return BroadcastBack(scope, op, gx, ops::Neg(scope, gx), grad_outputs);
}
REGISTER_GRADIENT_OP("SquaredDifference", SquaredDifferenceGrad);

absl::Status AddNGrad(const Scope& /*scope*/, const Operation& op,
                      const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->assign(op.num_inputs(), grad_inputs[0]);
  return absl::OkStatus();
}
REGISTER_GRADIENT_OP("AddN", AddNGrad);

// Between floating types the gradient is cast back; other casts are not
// differentiable.
absl::Status CastGrad(const Scope& scope, const Operation& op,
                      const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const DataType src = op.input_type(0);
  if (DataTypeIsFloating(src) && DataTypeIsFloating(op.output_type(0))) {
    grad_outputs->push_back(ops::Cast(scope, grad_inputs[0], src));
  } else {
    grad_outputs->push_back(NoGradient());
  }
  return scope.status();
}
REGISTER_GRADIENT_OP("Cast", CastGrad);

// Matrix products. For z = op(a) op(b), with op a transposition or not:
//   z = a b:     da = dz b^T,   db = a^T dz
//   z = a b^T:   da = dz b,     db = dz^T a
//   z = a^T b:   da = b dz^T,   db = a dz
//   z = a^T b^T: da = b^T dz^T, db = dz^T a^T
absl::Status MatMulGrad(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  bool ta = false, tb = false;
  DF_RETURN_IF_ERROR(GetNodeAttr(op.node()->attrs(), "transpose_a", &ta));
  DF_RETURN_IF_ERROR(GetNodeAttr(op.node()->attrs(), "transpose_b", &tb));
  const Output a = op.input(0);
  const Output b = op.input(1);
  const Output& g = grad_inputs[0];
  using Attrs = ops::MatMul::Attrs;
  Attrs ga = Attrs().GradA(true);
  Attrs gb = Attrs().GradB(true);
  if (!ta && !tb) {
    grad_outputs->push_back(ops::MatMul(scope, g, b, ga.TransposeB(true)));
    grad_outputs->push_back(ops::MatMul(scope, a, g, gb.TransposeA(true)));
  } else if (!ta && tb) {
    grad_outputs->push_back(ops::MatMul(scope, g, b, ga));
    grad_outputs->push_back(ops::MatMul(scope, g, a, gb.TransposeA(true)));
  } else if (ta && !tb) {
    grad_outputs->push_back(ops::MatMul(scope, b, g, ga.TransposeB(true)));
    grad_outputs->push_back(ops::MatMul(scope, a, g, gb));
  } else {
    grad_outputs->push_back(ops::MatMul(scope, b, g, ga.TransposeA(true).TransposeB(true)));
    grad_outputs->push_back(ops::MatMul(scope, g, a, gb.TransposeA(true).TransposeB(true)));
  }
  return scope.status();
}
REGISTER_GRADIENT_OP("MatMul", MatMulGrad);

// The same four cases over the last two dims; the batch dims of each
// operand's gradient are then summed back to the operand's (broadcast)
// batch shape.
absl::Status BatchMatMulV2Grad(const Scope& scope, const Operation& op,
                               const std::vector<Output>& grad_inputs,
                               std::vector<Output>* grad_outputs) {
  bool adj_x = false, adj_y = false;
  DF_RETURN_IF_ERROR(GetNodeAttr(op.node()->attrs(), "adj_x", &adj_x));
  DF_RETURN_IF_ERROR(GetNodeAttr(op.node()->attrs(), "adj_y", &adj_y));
  const Output x = op.input(0);
  const Output y = op.input(1);
  const Output& g = grad_inputs[0];
  using Attrs = ops::BatchMatMulV2::Attrs;
  Output gx, gy;
  if (!adj_x && !adj_y) {
    gx = ops::BatchMatMulV2(scope, g, y, Attrs().AdjY(true));
    gy = ops::BatchMatMulV2(scope, x, g, Attrs().AdjX(true));
  } else if (!adj_x && adj_y) {
    gx = ops::BatchMatMulV2(scope, g, y);
    gy = ops::BatchMatMulV2(scope, g, x, Attrs().AdjX(true));
  } else if (adj_x && !adj_y) {
    gx = ops::BatchMatMulV2(scope, y, g, Attrs().AdjY(true));
    gy = ops::BatchMatMulV2(scope, x, g);
  } else {
    gx = ops::BatchMatMulV2(scope, y, g, Attrs().AdjX(true).AdjY(true));
    gy = ops::BatchMatMulV2(scope, g, x, Attrs().AdjX(true).AdjY(true));
  }
  return BroadcastBack(scope, op, gx, gy, grad_outputs);
}
REGISTER_GRADIENT_OP("BatchMatMulV2", BatchMatMulV2Grad);

// Select(c, t, e) with c a scalar, a vector over the first dim or t's shape:
// the gradient goes to t where c holds and to e elsewhere.
absl::Status SelectGrad(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output c = op.input(0);
  const Output& g = grad_inputs[0];
  const Output zeros = ops::ZerosLike(scope, g);
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(ops::Select(scope, c, g, zeros));
  grad_outputs->push_back(ops::Select(scope, c, zeros, g));
  return scope.status();
}
REGISTER_GRADIENT_OP("Select", SelectGrad);

// SelectV2 broadcasts all three inputs: each branch's gradient is summed
// back to that branch's shape.
absl::Status SelectV2Grad(const Scope& scope, const Operation& op,
                          const std::vector<Output>& grad_inputs,
                          std::vector<Output>* grad_outputs) {
  const Output c = op.input(0);
  const Output& g = grad_inputs[0];
  const Output zeros = ops::ZerosLike(scope, g);
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(SumToShapeOf(scope, ops::SelectV2(scope, c, g, zeros), op.input(1)));
  grad_outputs->push_back(SumToShapeOf(scope, ops::SelectV2(scope, c, zeros, g), op.input(2)));
  return scope.status();
}
REGISTER_GRADIENT_OP("SelectV2", SelectV2Grad);

// Reductions: op.input(0) is x, op.input(1) the axes (no gradient).

absl::Status SumGrad(const Scope& scope, const Operation& op,
                     const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output x = op.input(0);
  const Output kept = grad::ReducedShape(scope, x, op.input(1));
  grad_outputs->push_back(grad::BroadcastToInput(scope, grad_inputs[0], x, kept));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("Sum", SumGrad);

// Sum's gradient divided by the number of elements averaged.
absl::Status MeanGrad(const Scope& scope, const Operation& op,
                      const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output x = op.input(0);
  const Output y = op.output(0);
  const Output kept = grad::ReducedShape(scope, x, op.input(1));
  const Output sum_grad = grad::BroadcastToInput(scope, grad_inputs[0], x, kept);
  const std::optional<TensorShape> x_shape = grad::KnownShape(scope, x);
  const std::optional<TensorShape> y_shape = grad::KnownShape(scope, y);
  Output count;
  if (x_shape && y_shape) {
    const int64_t out = std::max<int64_t>(y_shape->num_elements(), 1);
    count =
        ScalarConst(scope, static_cast<double>(x_shape->num_elements() / out), op.input_type(0));
  } else {
    count = ops::Cast(
        scope,
        ops::FloorDiv(scope, ops::Size(scope, x), ops::Maximum(scope, ops::Size(scope, y), 1)),
        op.input_type(0));
  }
  grad_outputs->push_back(ops::RealDiv(scope, sum_grad, count));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("Mean", MeanGrad);

// Max / Min: the gradient is shared equally among the elements equal to the
// extremum.
absl::Status MaxMinGrad(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output x = op.input(0);
  const Output axes = op.input(1);
  const Output kept = grad::ReducedShape(scope, x, axes);
  const Output y = ops::Reshape(scope, op.output(0), kept);
  const Output g = ops::Reshape(scope, grad_inputs[0], kept);
  const Output hits = ops::Cast(scope, ops::Equal(scope, x, y), op.input_type(0));
  const Output count = ops::Reshape(scope, ops::Sum(scope, hits, axes), kept);
  grad_outputs->push_back(ops::Mul(scope, ops::RealDiv(scope, hits, count), g));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("Max", MaxMinGrad);
REGISTER_GRADIENT_OP("Min", MaxMinGrad);

// d(prod x) / dx_i = prod / x_i (exact for nonzero inputs; see the file
// comment).
absl::Status ProdGrad(const Scope& scope, const Operation& op,
                      const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output x = op.input(0);
  const Output kept = grad::ReducedShape(scope, x, op.input(1));
  const Output g_times_prod =
      ops::Reshape(scope, ops::Mul(scope, grad_inputs[0], op.output(0)), kept);
  grad_outputs->push_back(ops::RealDiv(scope, g_times_prod, x));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("Prod", ProdGrad);

// x mod y = x - floor(x / y) * y: dz, -dz * floor(x / y).
absl::Status FloorModGrad(const Scope& scope, const Operation& op,
                          const std::vector<Output>& grad_inputs,
                          std::vector<Output>* grad_outputs) {
  const Output& g = grad_inputs[0];
  const Output gy =
      ops::Mul(scope, ops::Neg(scope, g), ops::FloorDiv(scope, op.input(0), op.input(1)));
  return BroadcastBack(scope, op, g, gy, grad_outputs);
}
REGISTER_GRADIENT_OP("FloorMod", FloorModGrad);

REGISTER_NO_GRADIENT_OP("Equal");
REGISTER_NO_GRADIENT_OP("NotEqual");
REGISTER_NO_GRADIENT_OP("Less");
REGISTER_NO_GRADIENT_OP("LessEqual");
REGISTER_NO_GRADIENT_OP("Greater");
REGISTER_NO_GRADIENT_OP("GreaterEqual");
REGISTER_NO_GRADIENT_OP("LogicalAnd");
REGISTER_NO_GRADIENT_OP("LogicalOr");
REGISTER_NO_GRADIENT_OP("LogicalNot");
REGISTER_NO_GRADIENT_OP("All");
REGISTER_NO_GRADIENT_OP("Any");
REGISTER_NO_GRADIENT_OP("ArgMax");
REGISTER_NO_GRADIENT_OP("ArgMin");
REGISTER_NO_GRADIENT_OP("FloorDiv");
// Piecewise constant: no gradient, as in TensorFlow.
REGISTER_NO_GRADIENT_OP("Floor");
REGISTER_NO_GRADIENT_OP("Ceil");
REGISTER_NO_GRADIENT_OP("Round");
REGISTER_NO_GRADIENT_OP("Range");
REGISTER_NO_GRADIENT_OP("BroadcastGradientArgs");

}  // namespace
}  // namespace distflow
