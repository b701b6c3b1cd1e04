#include "distflow/cc/ops/math_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::BuildOp;

Add::Add(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "Add", {x, y})), z(operation.output(0)) {}
AddV2::AddV2(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "AddV2", {x, y})), z(operation.output(0)) {}
Sub::Sub(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "Sub", {x, y})), z(operation.output(0)) {}
Mul::Mul(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "Mul", {x, y})), z(operation.output(0)) {}
RealDiv::RealDiv(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "RealDiv", {x, y})), z(operation.output(0)) {}
Div::Div(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "Div", {x, y})), z(operation.output(0)) {}
FloorDiv::FloorDiv(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "FloorDiv", {x, y})), z(operation.output(0)) {}
FloorMod::FloorMod(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "FloorMod", {x, y})), z(operation.output(0)) {}
Pow::Pow(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "Pow", {x, y})), z(operation.output(0)) {}
Maximum::Maximum(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "Maximum", {x, y})), z(operation.output(0)) {}
Minimum::Minimum(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "Minimum", {x, y})), z(operation.output(0)) {}
SquaredDifference::SquaredDifference(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "SquaredDifference", {x, y})), z(operation.output(0)) {}

Neg::Neg(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Neg", {x})), y(operation.output(0)) {}
Abs::Abs(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Abs", {x})), y(operation.output(0)) {}
Sign::Sign(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Sign", {x})), y(operation.output(0)) {}
Square::Square(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Square", {x})), y(operation.output(0)) {}
Sqrt::Sqrt(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Sqrt", {x})), y(operation.output(0)) {}
Rsqrt::Rsqrt(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Rsqrt", {x})), y(operation.output(0)) {}
Exp::Exp(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Exp", {x})), y(operation.output(0)) {}
Log::Log(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Log", {x})), y(operation.output(0)) {}
Tanh::Tanh(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Tanh", {x})), y(operation.output(0)) {}
Sigmoid::Sigmoid(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Sigmoid", {x})), y(operation.output(0)) {}
Reciprocal::Reciprocal(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Reciprocal", {x})), y(operation.output(0)) {}
Floor::Floor(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Floor", {x})), y(operation.output(0)) {}
Ceil::Ceil(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Ceil", {x})), y(operation.output(0)) {}
Round::Round(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Round", {x})), y(operation.output(0)) {}
Sin::Sin(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Sin", {x})), y(operation.output(0)) {}
Cos::Cos(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Cos", {x})), y(operation.output(0)) {}
Log1p::Log1p(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Log1p", {x})), y(operation.output(0)) {}
Expm1::Expm1(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Expm1", {x})), y(operation.output(0)) {}
Erf::Erf(const Scope& scope, Input x)
    : operation(BuildOp(scope, "Erf", {x})), y(operation.output(0)) {}

Equal::Equal(const Scope& scope, Input x, Input y) : Equal(scope, x, y, Attrs()) {}
Equal::Equal(const Scope& scope, Input x, Input y, const Attrs& attrs)
    : operation(BuildOp(scope, "Equal", {x, y},
                        {{"incompatible_shape_error", attrs.incompatible_shape_error_}})),
      z(operation.output(0)) {}
NotEqual::NotEqual(const Scope& scope, Input x, Input y) : NotEqual(scope, x, y, Attrs()) {}
NotEqual::NotEqual(const Scope& scope, Input x, Input y, const Attrs& attrs)
    : operation(BuildOp(scope, "NotEqual", {x, y},
                        {{"incompatible_shape_error", attrs.incompatible_shape_error_}})),
      z(operation.output(0)) {}
Less::Less(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "Less", {x, y})), z(operation.output(0)) {}
LessEqual::LessEqual(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "LessEqual", {x, y})), z(operation.output(0)) {}
Greater::Greater(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "Greater", {x, y})), z(operation.output(0)) {}
GreaterEqual::GreaterEqual(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "GreaterEqual", {x, y})), z(operation.output(0)) {}
LogicalAnd::LogicalAnd(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "LogicalAnd", {x, y})), z(operation.output(0)) {}
LogicalOr::LogicalOr(const Scope& scope, Input x, Input y)
    : operation(BuildOp(scope, "LogicalOr", {x, y})), z(operation.output(0)) {}
LogicalNot::LogicalNot(const Scope& scope, Input x)
    : operation(BuildOp(scope, "LogicalNot", {x})), y(operation.output(0)) {}

Sum::Sum(const Scope& scope, Input input, Input axis) : Sum(scope, input, axis, Attrs()) {}
Sum::Sum(const Scope& scope, Input input, Input axis, const Attrs& attrs)
    : operation(BuildOp(scope, "Sum", {input, axis}, {{"keep_dims", attrs.keep_dims_}})),
      output(operation.output(0)) {}
Mean::Mean(const Scope& scope, Input input, Input axis) : Mean(scope, input, axis, Attrs()) {}
Mean::Mean(const Scope& scope, Input input, Input axis, const Attrs& attrs)
    : operation(BuildOp(scope, "Mean", {input, axis}, {{"keep_dims", attrs.keep_dims_}})),
      output(operation.output(0)) {}
Max::Max(const Scope& scope, Input input, Input axis) : Max(scope, input, axis, Attrs()) {}
Max::Max(const Scope& scope, Input input, Input axis, const Attrs& attrs)
    : operation(BuildOp(scope, "Max", {input, axis}, {{"keep_dims", attrs.keep_dims_}})),
      output(operation.output(0)) {}
Min::Min(const Scope& scope, Input input, Input axis) : Min(scope, input, axis, Attrs()) {}
Min::Min(const Scope& scope, Input input, Input axis, const Attrs& attrs)
    : operation(BuildOp(scope, "Min", {input, axis}, {{"keep_dims", attrs.keep_dims_}})),
      output(operation.output(0)) {}
Prod::Prod(const Scope& scope, Input input, Input axis) : Prod(scope, input, axis, Attrs()) {}
Prod::Prod(const Scope& scope, Input input, Input axis, const Attrs& attrs)
    : operation(BuildOp(scope, "Prod", {input, axis}, {{"keep_dims", attrs.keep_dims_}})),
      output(operation.output(0)) {}
All::All(const Scope& scope, Input input, Input axis) : All(scope, input, axis, Attrs()) {}
All::All(const Scope& scope, Input input, Input axis, const Attrs& attrs)
    : operation(BuildOp(scope, "All", {input, axis}, {{"keep_dims", attrs.keep_dims_}})),
      output(operation.output(0)) {}
Any::Any(const Scope& scope, Input input, Input axis) : Any(scope, input, axis, Attrs()) {}
Any::Any(const Scope& scope, Input input, Input axis, const Attrs& attrs)
    : operation(BuildOp(scope, "Any", {input, axis}, {{"keep_dims", attrs.keep_dims_}})),
      output(operation.output(0)) {}

ArgMax::ArgMax(const Scope& scope, Input input, Input dimension)
    : ArgMax(scope, input, dimension, Attrs()) {}
ArgMax::ArgMax(const Scope& scope, Input input, Input dimension, const Attrs& attrs)
    : operation(
          BuildOp(scope, "ArgMax", {input, dimension}, {{"output_type", attrs.output_type_}})),
      output(operation.output(0)) {}
ArgMin::ArgMin(const Scope& scope, Input input, Input dimension)
    : ArgMin(scope, input, dimension, Attrs()) {}
ArgMin::ArgMin(const Scope& scope, Input input, Input dimension, const Attrs& attrs)
    : operation(
          BuildOp(scope, "ArgMin", {input, dimension}, {{"output_type", attrs.output_type_}})),
      output(operation.output(0)) {}

Cast::Cast(const Scope& scope, Input x, DataType DstT) : Cast(scope, x, DstT, Attrs()) {}
Cast::Cast(const Scope& scope, Input x, DataType DstT, const Attrs& attrs)
    : operation(BuildOp(scope, "Cast", {x}, {{"DstT", DstT}, {"Truncate", attrs.truncate_}})),
      y(operation.output(0)) {}

MatMul::MatMul(const Scope& scope, Input a, Input b) : MatMul(scope, a, b, Attrs()) {}
MatMul::MatMul(const Scope& scope, Input a, Input b, const Attrs& attrs)
    : operation(BuildOp(scope, "MatMul", {a, b},
                        {{"transpose_a", attrs.transpose_a_},
                         {"transpose_b", attrs.transpose_b_},
                         {"grad_a", attrs.grad_a_},
                         {"grad_b", attrs.grad_b_}})),
      product(operation.output(0)) {}

BatchMatMulV2::BatchMatMulV2(const Scope& scope, Input x, Input y)
    : BatchMatMulV2(scope, x, y, Attrs()) {}
BatchMatMulV2::BatchMatMulV2(const Scope& scope, Input x, Input y, const Attrs& attrs)
    : operation(BuildOp(scope, "BatchMatMulV2", {x, y},
                        {{"adj_x", attrs.adj_x_}, {"adj_y", attrs.adj_y_}})),
      output(operation.output(0)) {}

Select::Select(const Scope& scope, Input condition, Input x, Input y)
    : operation(BuildOp(scope, "Select", {condition, x, y})), output(operation.output(0)) {}
SelectV2::SelectV2(const Scope& scope, Input condition, Input t, Input e)
    : operation(BuildOp(scope, "SelectV2", {condition, t, e})), output(operation.output(0)) {}

AddN::AddN(const Scope& scope, InputList inputs)
    : operation(BuildOp(scope, "AddN", {inputs})), sum(operation.output(0)) {}

Range::Range(const Scope& scope, Input start, Input limit, Input delta)
    : operation(BuildOp(scope, "Range", {start, limit, delta})), output(operation.output(0)) {}

}  // namespace ops
}  // namespace distflow
