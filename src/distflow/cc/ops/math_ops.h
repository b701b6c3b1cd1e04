// Client wrappers for the math ops: elementwise arithmetic and functions,
// comparisons and logic, reductions, ArgMax/ArgMin, Cast, MatMul,
// BatchMatMulV2, Select, AddN and Range. Each class builds one node when
// constructed (see op_builder.h): type attrs (T, Tidx, SrcT, ...) come from
// the inputs' dtypes, optional attrs from the nested Attrs, and any error goes
// to the scope's status, leaving the outputs null.
#ifndef DISTFLOW_CC_OPS_MATH_OPS_H_
#define DISTFLOW_CC_OPS_MATH_OPS_H_

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// Binary elementwise ops with NumPy broadcasting: z = f(x, y).

class Add {
 public:
  Add(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class AddV2 {
 public:
  AddV2(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class Sub {
 public:
  Sub(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};
using Subtract = Sub;

class Mul {
 public:
  Mul(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};
using Multiply = Mul;

class RealDiv {
 public:
  RealDiv(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class Div {
 public:
  Div(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class FloorDiv {
 public:
  FloorDiv(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class FloorMod {
 public:
  FloorMod(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class Pow {
 public:
  Pow(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class Maximum {
 public:
  Maximum(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class Minimum {
 public:
  Minimum(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class SquaredDifference {
 public:
  SquaredDifference(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

// Unary elementwise ops: y = f(x).

class Neg {
 public:
  Neg(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};
using Negate = Neg;

class Abs {
 public:
  Abs(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Sign {
 public:
  Sign(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Square {
 public:
  Square(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Sqrt {
 public:
  Sqrt(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Rsqrt {
 public:
  Rsqrt(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Exp {
 public:
  Exp(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Log {
 public:
  Log(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Tanh {
 public:
  Tanh(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Sigmoid {
 public:
  Sigmoid(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Reciprocal {
 public:
  Reciprocal(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Floor {
 public:
  Floor(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Ceil {
 public:
  Ceil(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Round {
 public:
  Round(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Sin {
 public:
  Sin(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Cos {
 public:
  Cos(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Log1p {
 public:
  Log1p(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Expm1 {
 public:
  Expm1(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class Erf {
 public:
  Erf(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

// Comparisons and logic; z is bool.

class Equal {
 public:
  struct Attrs {
    // When false, inputs whose shapes cannot broadcast compare unequal
    // instead of failing. Default true.
    [[nodiscard]] Attrs IncompatibleShapeError(bool x) {
      Attrs ret = *this;
      ret.incompatible_shape_error_ = x;
      return ret;
    }
    bool incompatible_shape_error_ = true;
  };
  Equal(const Scope& scope, Input x, Input y);
  Equal(const Scope& scope, Input x, Input y, const Attrs& attrs);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  static Attrs IncompatibleShapeError(bool x) { return Attrs().IncompatibleShapeError(x); }
  Operation operation;
  Output z;
};

class NotEqual {
 public:
  struct Attrs {
    [[nodiscard]] Attrs IncompatibleShapeError(bool x) {
      Attrs ret = *this;
      ret.incompatible_shape_error_ = x;
      return ret;
    }
    bool incompatible_shape_error_ = true;
  };
  NotEqual(const Scope& scope, Input x, Input y);
  NotEqual(const Scope& scope, Input x, Input y, const Attrs& attrs);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  static Attrs IncompatibleShapeError(bool x) { return Attrs().IncompatibleShapeError(x); }
  Operation operation;
  Output z;
};

class Less {
 public:
  Less(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class LessEqual {
 public:
  LessEqual(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class Greater {
 public:
  Greater(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class GreaterEqual {
 public:
  GreaterEqual(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class LogicalAnd {
 public:
  LogicalAnd(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class LogicalOr {
 public:
  LogicalOr(const Scope& scope, Input x, Input y);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class LogicalNot {
 public:
  LogicalNot(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

// Reductions of `input` over the dimensions in `axis` (int32 or int64).

// The optional attr every reduction has.
struct ReductionAttrs {
  // Keep reduced dimensions with length 1. Default false.
  [[nodiscard]] ReductionAttrs KeepDims(bool x) {
    ReductionAttrs ret = *this;
    ret.keep_dims_ = x;
    return ret;
  }
  bool keep_dims_ = false;
};

class Sum {
 public:
  using Attrs = ReductionAttrs;
  Sum(const Scope& scope, Input input, Input axis);
  Sum(const Scope& scope, Input input, Input axis, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs KeepDims(bool x) { return Attrs().KeepDims(x); }
  Operation operation;
  Output output;
};
using ReduceSum = Sum;

class Mean {
 public:
  using Attrs = ReductionAttrs;
  Mean(const Scope& scope, Input input, Input axis);
  Mean(const Scope& scope, Input input, Input axis, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs KeepDims(bool x) { return Attrs().KeepDims(x); }
  Operation operation;
  Output output;
};
using ReduceMean = Mean;

class Max {
 public:
  using Attrs = ReductionAttrs;
  Max(const Scope& scope, Input input, Input axis);
  Max(const Scope& scope, Input input, Input axis, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs KeepDims(bool x) { return Attrs().KeepDims(x); }
  Operation operation;
  Output output;
};
using ReduceMax = Max;

class Min {
 public:
  using Attrs = ReductionAttrs;
  Min(const Scope& scope, Input input, Input axis);
  Min(const Scope& scope, Input input, Input axis, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs KeepDims(bool x) { return Attrs().KeepDims(x); }
  Operation operation;
  Output output;
};
using ReduceMin = Min;

class Prod {
 public:
  using Attrs = ReductionAttrs;
  Prod(const Scope& scope, Input input, Input axis);
  Prod(const Scope& scope, Input input, Input axis, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs KeepDims(bool x) { return Attrs().KeepDims(x); }
  Operation operation;
  Output output;
};
using ReduceProd = Prod;

class All {
 public:
  using Attrs = ReductionAttrs;
  All(const Scope& scope, Input input, Input axis);
  All(const Scope& scope, Input input, Input axis, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs KeepDims(bool x) { return Attrs().KeepDims(x); }
  Operation operation;
  Output output;
};
using ReduceAll = All;

class Any {
 public:
  using Attrs = ReductionAttrs;
  Any(const Scope& scope, Input input, Input axis);
  Any(const Scope& scope, Input input, Input axis, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs KeepDims(bool x) { return Attrs().KeepDims(x); }
  Operation operation;
  Output output;
};
using ReduceAny = Any;

// The index of the largest / smallest value of `input` along `dimension`.

// The optional attr ArgMax and ArgMin have.
struct ArgAttrs {
  // The index type: int16, uint16, int32 or int64. Default int64.
  [[nodiscard]] ArgAttrs OutputType(DataType x) {
    ArgAttrs ret = *this;
    ret.output_type_ = x;
    return ret;
  }
  DataType output_type_ = DT_INT64;
};

class ArgMax {
 public:
  using Attrs = ArgAttrs;
  ArgMax(const Scope& scope, Input input, Input dimension);
  ArgMax(const Scope& scope, Input input, Input dimension, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs OutputType(DataType x) { return Attrs().OutputType(x); }
  Operation operation;
  Output output;
};

class ArgMin {
 public:
  using Attrs = ArgAttrs;
  ArgMin(const Scope& scope, Input input, Input dimension);
  ArgMin(const Scope& scope, Input input, Input dimension, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs OutputType(DataType x) { return Attrs().OutputType(x); }
  Operation operation;
  Output output;
};

// `x` converted to `DstT`.
class Cast {
 public:
  struct Attrs {
    // Truncate instead of round when narrowing floats. Default false.
    [[nodiscard]] Attrs Truncate(bool x) {
      Attrs ret = *this;
      ret.truncate_ = x;
      return ret;
    }
    bool truncate_ = false;
  };
  Cast(const Scope& scope, Input x, DataType DstT);
  Cast(const Scope& scope, Input x, DataType DstT, const Attrs& attrs);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  static Attrs Truncate(bool x) { return Attrs().Truncate(x); }
  Operation operation;
  Output y;
};

// The matrix product of `a` and `b` (rank 2), either transposed first.
class MatMul {
 public:
  struct Attrs {
    [[nodiscard]] Attrs TransposeA(bool x) {
      Attrs ret = *this;
      ret.transpose_a_ = x;
      return ret;
    }
    [[nodiscard]] Attrs TransposeB(bool x) {
      Attrs ret = *this;
      ret.transpose_b_ = x;
      return ret;
    }
    // Marks a MatMul built as the gradient of input a / b.
    [[nodiscard]] Attrs GradA(bool x) {
      Attrs ret = *this;
      ret.grad_a_ = x;
      return ret;
    }
    [[nodiscard]] Attrs GradB(bool x) {
      Attrs ret = *this;
      ret.grad_b_ = x;
      return ret;
    }
    bool transpose_a_ = false;
    bool transpose_b_ = false;
    bool grad_a_ = false;
    bool grad_b_ = false;
  };
  MatMul(const Scope& scope, Input a, Input b);
  MatMul(const Scope& scope, Input a, Input b, const Attrs& attrs);
  operator Output() const { return product; }
  operator Input() const { return product; }
  Node* node() const { return product.node(); }
  static Attrs TransposeA(bool x) { return Attrs().TransposeA(x); }
  static Attrs TransposeB(bool x) { return Attrs().TransposeB(x); }
  static Attrs GradA(bool x) { return Attrs().GradA(x); }
  static Attrs GradB(bool x) { return Attrs().GradB(x); }
  Operation operation;
  Output product;
};

// Matrix products over the last two dimensions, batch dimensions broadcast.
class BatchMatMulV2 {
 public:
  struct Attrs {
    // Use the adjoint (transpose, for real types) of x / y.
    [[nodiscard]] Attrs AdjX(bool x) {
      Attrs ret = *this;
      ret.adj_x_ = x;
      return ret;
    }
    [[nodiscard]] Attrs AdjY(bool x) {
      Attrs ret = *this;
      ret.adj_y_ = x;
      return ret;
    }
    bool adj_x_ = false;
    bool adj_y_ = false;
  };
  BatchMatMulV2(const Scope& scope, Input x, Input y);
  BatchMatMulV2(const Scope& scope, Input x, Input y, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs AdjX(bool x) { return Attrs().AdjX(x); }
  static Attrs AdjY(bool x) { return Attrs().AdjY(x); }
  Operation operation;
  Output output;
};

// Elements of x where `condition` is true, else of y. The condition is a
// scalar, a vector over x's first dimension, or x's shape.
class Select {
 public:
  Select(const Scope& scope, Input condition, Input x, Input y);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// Select with all three inputs broadcast together.
class SelectV2 {
 public:
  SelectV2(const Scope& scope, Input condition, Input t, Input e);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// The elementwise sum of same-shaped, same-typed tensors.
class AddN {
 public:
  AddN(const Scope& scope, InputList inputs);
  operator Output() const { return sum; }
  operator Input() const { return sum; }
  Node* node() const { return sum.node(); }
  Operation operation;
  Output sum;
};

// The sequence start, start + delta, ... up to but excluding limit.
class Range {
 public:
  Range(const Scope& scope, Input start, Input limit, Input delta);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_MATH_OPS_H_
