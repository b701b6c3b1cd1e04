// Math op definitions: elementwise arithmetic with NumPy broadcasting, unary
// math and its gradient helpers, comparisons and logic, Select, Cast,
// reductions, ArgMax/ArgMin, AddN, BroadcastGradientArgs, MatMul and
// BatchMatMulV2. Names, input order, attrs and defaults follow TensorFlow's,
// so GraphDefs written by TensorFlow validate against these definitions.
// Shape functions reject shapes that can never work with InvalidArgument
// naming the shapes involved.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// Type sets, as in TensorFlow's definitions, less the types distflow tensors
// cannot hold (half, complex).
constexpr char kBinaryTypes[] =
    "T: {bfloat16, float, double, uint8, int8, uint16, int16, int32, int64, "
    "uint32, uint64}";
constexpr char kFloatTypes[] = "T: {bfloat16, float, double}";
constexpr char kSignedTypes[] = "T: {bfloat16, float, double, int8, int16, int32, int64}";
constexpr char kRealTypes[] = "T: realnumbertypes";

// Output 0 is input 0 merged with input 1 (both must have the same shape).
absl::Status MergeBothInputsShape(InferenceContext* c) {
  PartialTensorShape out;
  absl::Status s = c->input(0).MergeWith(c->input(1), &out);
  if (!s.ok()) {
    return errors::InvalidArgument("inputs must have the same shape: ", c->input(0).DebugString(),
                                   " vs ", c->input(1).DebugString());
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

// Equal/NotEqual: incompatible shapes give a scalar when
// incompatible_shape_error is false.
absl::Status EqualityShape(InferenceContext* c) {
  bool incompatible_shape_error = true;
  DF_RETURN_IF_ERROR(c->GetAttr("incompatible_shape_error", &incompatible_shape_error));
  PartialTensorShape out;
  absl::Status s = BroadcastShapes(c->input(0), c->input(1), &out);
  if (!s.ok()) {
    if (incompatible_shape_error) return s;
    out = PartialTensorShape({});
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

// Select (v1): t and e have one shape; cond is a scalar, has that shape, or
// is a vector as long as its first dimension.
absl::Status SelectShape(InferenceContext* c) {
  PartialTensorShape data;
  if (!c->input(1).MergeWith(c->input(2), &data).ok()) {
    return errors::InvalidArgument("'t' and 'e' must have the same shape: ",
                                   c->input(1).DebugString(), " vs ", c->input(2).DebugString());
  }
  const PartialTensorShape& cond = c->input(0);
  c->set_output(0, data);
  if (cond.unknown_rank() || data.unknown_rank() || cond.dims() == 0) {
    return absl::OkStatus();
  }
  const auto mismatch = [&] {
    return errors::InvalidArgument(
        "'cond' must be a scalar, a vector matching dimension 0 of 't', or "
        "have the shape of 't': cond ",
        cond.DebugString(), " vs t ", data.DebugString());
  };
  if (cond.dims() == 1 && data.dims() >= 1) {
    const int64_t a = cond.dim_size(0), b = data.dim_size(0);
    if (a >= 0 && b >= 0 && a != b) return mismatch();
    if (data.dims() == 1) {
      PartialTensorShape merged;
      DF_RETURN_IF_ERROR(cond.MergeWith(data, &merged));
      c->set_output(0, std::move(merged));
    }
    return absl::OkStatus();
  }
  PartialTensorShape merged;
  if (!data.MergeWith(cond, &merged).ok()) return mismatch();
  c->set_output(0, std::move(merged));
  return absl::OkStatus();
}

absl::Status SelectV2Shape(InferenceContext* c) {
  PartialTensorShape te, out;
  DF_RETURN_IF_ERROR(BroadcastShapes(c->input(1), c->input(2), &te));
  DF_RETURN_IF_ERROR(BroadcastShapes(c->input(0), te, &out));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

// Checks reduction axes against `rank`: each in [-rank, rank), no duplicates.
absl::Status CheckReductionAxes(const std::vector<int64_t>& axes, int rank,
                                std::vector<bool>* reduced) {
  reduced->assign(rank, false);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return errors::InvalidArgument("Invalid reduction dimension ", axis, " for input with ", rank,
                                     " dimensions");
    }
    const int64_t d = axis < 0 ? axis + rank : axis;
    if ((*reduced)[d]) {
      return errors::InvalidArgument("Duplicate reduction dimension ", axis, " for input with ",
                                     rank, " dimensions");
    }
    (*reduced)[d] = true;
  }
  return absl::OkStatus();
}

absl::Status ReductionShape(InferenceContext* c) {
  bool keep_dims = false;
  DF_RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
  DF_RETURN_IF_ERROR(c->WithRankAtMost(1, 1, nullptr));
  const PartialTensorShape& input = c->input(0);
  const PartialTensorShape& indices = c->input(1);
  // No axes: the output is the input.
  if (indices.dims() == 1 && indices.dim_size(0) == 0) {
    c->set_output(0, input);
    return absl::OkStatus();
  }
  std::vector<int64_t> axes;
  if (!c->VectorInputValues(1, &axes)) {
    c->set_output(0, keep_dims && !input.unknown_rank()
                         ? PartialTensorShape::UnknownDims(input.dims())
                         : PartialTensorShape::Unknown());
    return absl::OkStatus();
  }
  if (input.unknown_rank()) {
    c->set_output(0, PartialTensorShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<bool> reduced;
  DF_RETURN_IF_ERROR(CheckReductionAxes(axes, input.dims(), &reduced));
  std::vector<int64_t> dims;
  for (int d = 0; d < input.dims(); ++d) {
    if (!reduced[d]) {
      dims.push_back(input.dim_size(d));
    } else if (keep_dims) {
      dims.push_back(1);
    }
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status ArgOpShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(1));
  const PartialTensorShape& input = c->input(0);
  if (input.unknown_rank()) {
    c->set_output(0, PartialTensorShape::Unknown());
    return absl::OkStatus();
  }
  const int rank = input.dims();
  if (rank == 0) {
    return errors::InvalidArgument("input must be at least rank 1, got shape ",
                                   input.DebugString());
  }
  int64_t axis;
  if (!c->ScalarInputValue(1, &axis)) {
    c->set_output(0, PartialTensorShape::UnknownDims(rank - 1));
    return absl::OkStatus();
  }
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument("Expected dimension in the range [", -rank, ", ", rank,
                                   "), but got ", axis);
  }
  if (axis < 0) axis += rank;
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d) {
    if (d != axis) dims.push_back(input.dim_size(d));
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

absl::Status AddNShape(InferenceContext* c) {
  PartialTensorShape out = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    PartialTensorShape merged;
    if (!out.MergeWith(c->input(i), &merged).ok()) {
      return errors::InvalidArgument("AddN inputs must have the same shape: input 0 has ",
                                     c->input(0).DebugString(), ", input ", i, " has ",
                                     c->input(i).DebugString());
    }
    out = std::move(merged);
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status BroadcastGradientArgsShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithRank(0, 1, nullptr));
  DF_RETURN_IF_ERROR(c->WithRank(1, 1, nullptr));
  c->set_output(0, PartialTensorShape::UnknownDims(1));
  c->set_output(1, PartialTensorShape::UnknownDims(1));
  return absl::OkStatus();
}

absl::Status MatMulShape(InferenceContext* c) {
  PartialTensorShape a, b;
  DF_RETURN_IF_ERROR(c->WithRank(0, 2, &a));
  DF_RETURN_IF_ERROR(c->WithRank(1, 2, &b));
  bool transpose_a = false, transpose_b = false;
  DF_RETURN_IF_ERROR(c->GetAttr("transpose_a", &transpose_a));
  DF_RETURN_IF_ERROR(c->GetAttr("transpose_b", &transpose_b));
  const int64_t m = a.dim_size(transpose_a ? 1 : 0);
  const int64_t k_a = a.dim_size(transpose_a ? 0 : 1);
  const int64_t k_b = b.dim_size(transpose_b ? 1 : 0);
  const int64_t n = b.dim_size(transpose_b ? 0 : 1);
  if (k_a >= 0 && k_b >= 0 && k_a != k_b) {
    return errors::InvalidArgument(
        "Matrix size-incompatible: inner dimensions must agree: ", c->input(0).DebugString(),
        " vs ", c->input(1).DebugString(), " (transpose_a=", transpose_a,
        ", transpose_b=", transpose_b, ")");
  }
  c->set_output(0, PartialTensorShape({m, n}));
  return absl::OkStatus();
}

absl::Status BatchMatMulV2Shape(InferenceContext* c) {
  PartialTensorShape x, y;
  DF_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &x));
  DF_RETURN_IF_ERROR(c->WithRankAtLeast(1, 2, &y));
  bool adj_x = false, adj_y = false;
  DF_RETURN_IF_ERROR(c->GetAttr("adj_x", &adj_x));
  DF_RETURN_IF_ERROR(c->GetAttr("adj_y", &adj_y));
  if (x.unknown_rank() || y.unknown_rank()) {
    c->set_output(0, PartialTensorShape::Unknown());
    return absl::OkStatus();
  }
  const int rx = x.dims(), ry = y.dims();
  const int64_t m = x.dim_size(adj_x ? rx - 1 : rx - 2);
  const int64_t k_x = x.dim_size(adj_x ? rx - 2 : rx - 1);
  const int64_t k_y = y.dim_size(adj_y ? ry - 1 : ry - 2);
  const int64_t n = y.dim_size(adj_y ? ry - 2 : ry - 1);
  if (k_x >= 0 && k_y >= 0 && k_x != k_y) {
    return errors::InvalidArgument(
        "Matrix size-incompatible: inner dimensions must agree: ", x.DebugString(), " vs ",
        y.DebugString(), " (adj_x=", adj_x, ", adj_y=", adj_y, ")");
  }
  const PartialTensorShape batch_x(x.dim_sizes().subspan(0, rx - 2));
  const PartialTensorShape batch_y(y.dim_sizes().subspan(0, ry - 2));
  PartialTensorShape out;
  if (!BroadcastShapes(batch_x, batch_y, &out).ok()) {
    return errors::InvalidArgument("batch dimensions are incompatible for broadcasting: ",
                                   x.DebugString(), " vs ", y.DebugString());
  }
  out.AddDim(m);
  out.AddDim(n);
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

// Op families sharing a signature and shape function; each expands to a
// REGISTER_OP that the uses below extend with traits and docs.
#define DF_BINARY_OP(name, types)                                                      \
  REGISTER_OP(name).Input("x: T").Input("y: T").Output("z: T").Attr(types).SetShapeFn( \
      BroadcastBinaryOpShape)
#define DF_UNARY_OP(name, types) \
  REGISTER_OP(name).Input("x: T").Output("y: T").Attr(types).SetShapeFn(UnchangedShape)
#define DF_UNARY_GRAD_OP(name) \
  REGISTER_OP(name)            \
      .Input("y: T")           \
      .Input("dy: T")          \
      .Output("z: T")          \
      .Attr(kFloatTypes)       \
      .SetShapeFn(MergeBothInputsShape)
#define DF_COMPARISON_OP(name) \
  REGISTER_OP(name)            \
      .Input("x: T")           \
      .Input("y: T")           \
      .Output("z: bool")       \
      .Attr(kRealTypes)        \
      .SetShapeFn(BroadcastBinaryOpShape)
#define DF_EQUALITY_OP(name)                         \
  REGISTER_OP(name)                                  \
      .Input("x: T")                                 \
      .Input("y: T")                                 \
      .Output("z: bool")                             \
      .Attr("T: type")                               \
      .Attr("incompatible_shape_error: bool = true") \
      .SetIsCommutative()                            \
      .SetShapeFn(EqualityShape)
#define DF_REDUCTION_OP(name, types)           \
  REGISTER_OP(name)                            \
      .Input("input: T")                       \
      .Input("reduction_indices: Tidx")        \
      .Output("output: T")                     \
      .Attr("keep_dims: bool = false")         \
      .Attr(types)                             \
      .Attr("Tidx: {int32, int64} = DT_INT32") \
      .SetShapeFn(ReductionShape)
#define DF_ARG_OP(name)                                               \
  REGISTER_OP(name)                                                   \
      .Input("input: T")                                              \
      .Input("dimension: Tidx")                                       \
      .Output("output: output_type")                                  \
      .Attr(                                                          \
          "T: {bfloat16, float, double, uint8, int8, uint16, int16, " \
          "int32, int64, uint32, uint64, bool}")                      \
      .Attr("Tidx: {int16, int32, int64} = DT_INT32")                 \
      .Attr("output_type: {int16, uint16, int32, int64} = DT_INT64")  \
      .SetShapeFn(ArgOpShape)

// Binary arithmetic with broadcasting.
DF_BINARY_OP("AddV2", kBinaryTypes)
    .SetIsCommutative()
    .SetIsAggregate()
    .Doc("Returns x + y elementwise.");
DF_BINARY_OP("Add",
             "T: {bfloat16, float, double, uint8, int8, int16, int32, int64, "
             "string}")
    .Doc("Returns x + y elementwise; strings concatenate.");
DF_BINARY_OP("Sub", kBinaryTypes).Doc("Returns x - y elementwise.");
DF_BINARY_OP("Mul", kBinaryTypes).SetIsCommutative().Doc("Returns x * y elementwise.");
DF_BINARY_OP("RealDiv", kBinaryTypes).Doc("Returns x / y elementwise for real types.");
DF_BINARY_OP("Div", kBinaryTypes).Doc("Returns x / y elementwise; integer division truncates.");
DF_BINARY_OP("FloorDiv", kBinaryTypes).Doc("Returns floor(x / y) elementwise.");
DF_BINARY_OP("FloorMod",
             "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
             "bfloat16, float, double}")
    .Doc("Returns x - floor(x / y) * y elementwise: the sign of y.");
DF_BINARY_OP("Pow", kSignedTypes).Doc("Returns x to the power y elementwise.");
DF_BINARY_OP("Maximum", kBinaryTypes).SetIsCommutative().Doc("Returns max(x, y) elementwise.");
DF_BINARY_OP("Minimum", kBinaryTypes).SetIsCommutative().Doc("Returns min(x, y) elementwise.");
DF_BINARY_OP("SquaredDifference", "T: {bfloat16, float, double, int32, int64}")
    .SetIsCommutative()
    .Doc("Returns (x - y) * (x - y) elementwise.");

// Unary math.
DF_UNARY_OP("Neg", kSignedTypes).Doc("Returns -x elementwise.");
DF_UNARY_OP("Abs", kSignedTypes).Doc("Returns |x| elementwise.");
DF_UNARY_OP("Sign", kSignedTypes).Doc("Returns -1, 0 or 1 by the sign of x elementwise.");
DF_UNARY_OP("Square",
            "T: {bfloat16, float, double, int8, int16, int32, int64, uint8, "
            "uint16, uint32, uint64}")
    .Doc("Returns x * x elementwise.");
DF_UNARY_OP("Sqrt", kFloatTypes).Doc("Returns sqrt(x) elementwise.");
DF_UNARY_OP("Rsqrt", kFloatTypes).Doc("Returns 1 / sqrt(x) elementwise.");
DF_UNARY_OP("Exp", kFloatTypes).Doc("Returns e^x elementwise.");
DF_UNARY_OP("Log", kFloatTypes).Doc("Returns ln(x) elementwise.");
DF_UNARY_OP("Tanh", kFloatTypes).Doc("Returns tanh(x) elementwise.");
DF_UNARY_OP("Floor", kFloatTypes).Doc("Returns the largest integer not above x elementwise.");
DF_UNARY_OP("Sigmoid", kFloatTypes).Doc("Returns 1 / (1 + exp(-x)) elementwise.");
DF_UNARY_OP("Reciprocal", kSignedTypes).Doc("Returns 1 / x elementwise.");
DF_UNARY_OP("Sin", kFloatTypes).Doc("Returns sin(x) elementwise.");
DF_UNARY_OP("Cos", kFloatTypes).Doc("Returns cos(x) elementwise.");
DF_UNARY_OP("Log1p", kFloatTypes).Doc("Returns ln(1 + x) elementwise, accurate for small x.");
DF_UNARY_OP("Expm1", kFloatTypes).Doc("Returns e^x - 1 elementwise, accurate for small x.");
DF_UNARY_OP("Erf", kFloatTypes).Doc("Returns the Gauss error function of x elementwise.");
DF_UNARY_OP("Ceil", kFloatTypes).Doc("Returns the smallest integer not below x elementwise.");
DF_UNARY_OP("Round", kFloatTypes)
    .Doc("Returns x rounded to the nearest integer elementwise, halves to even.");

// Gradients of unary ops, computed from the op's output y and the incoming
// gradient dy.
DF_UNARY_GRAD_OP("SigmoidGrad").Doc("Returns dy * y * (1 - y).");
DF_UNARY_GRAD_OP("TanhGrad").Doc("Returns dy * (1 - y * y).");
DF_UNARY_GRAD_OP("SqrtGrad").Doc("Returns dy * 0.5 / y.");
DF_UNARY_GRAD_OP("RsqrtGrad").Doc("Returns dy * -0.5 * y^3.");

// Comparisons and logic.
DF_EQUALITY_OP("Equal").Doc("Returns x == y elementwise.");
DF_EQUALITY_OP("NotEqual").Doc("Returns x != y elementwise.");
DF_COMPARISON_OP("Less").Doc("Returns x < y elementwise.");
DF_COMPARISON_OP("LessEqual").Doc("Returns x <= y elementwise.");
DF_COMPARISON_OP("Greater").Doc("Returns x > y elementwise.");
DF_COMPARISON_OP("GreaterEqual").Doc("Returns x >= y elementwise.");
REGISTER_OP("LogicalAnd")
    .Input("x: bool")
    .Input("y: bool")
    .Output("z: bool")
    .SetIsCommutative()
    .SetShapeFn(BroadcastBinaryOpShape)
    .Doc("Returns x && y elementwise.");
REGISTER_OP("LogicalOr")
    .Input("x: bool")
    .Input("y: bool")
    .Output("z: bool")
    .SetIsCommutative()
    .SetShapeFn(BroadcastBinaryOpShape)
    .Doc("Returns x || y elementwise.");
REGISTER_OP("LogicalNot")
    .Input("x: bool")
    .Output("y: bool")
    .SetShapeFn(UnchangedShape)
    .Doc("Returns !x elementwise.");

REGISTER_OP("Select")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(SelectShape)
    .Doc(
        "Picks t where condition is true, else e; a vector condition picks "
        "whole rows of t and e.");
REGISTER_OP("SelectV2")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(SelectV2Shape)
    .Doc("Picks t where condition is true, else e, broadcasting all three.");

REGISTER_OP("Cast")
    .Input("x: SrcT")
    .Output("y: DstT")
    .Attr("SrcT: type")
    .Attr("DstT: type")
    .Attr("Truncate: bool = false")
    .SetShapeFn(UnchangedShape)
    .Doc("Converts x to DstT elementwise.");

// Reductions.
DF_REDUCTION_OP("Sum", "T: numbertypes").Doc("Sums the input over the reduction dimensions.");
DF_REDUCTION_OP("Mean", "T: numbertypes").Doc("Averages the input over the reduction dimensions.");
DF_REDUCTION_OP("Prod", "T: numbertypes")
    .Doc("Multiplies the input over the reduction dimensions.");
DF_REDUCTION_OP("Max", kRealTypes).Doc("The largest input value over the reduction dimensions.");
DF_REDUCTION_OP("Min", kRealTypes).Doc("The smallest input value over the reduction dimensions.");
REGISTER_OP("All")
    .Input("input: bool")
    .Input("reduction_indices: Tidx")
    .Output("output: bool")
    .Attr("keep_dims: bool = false")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Logical and of the input over the reduction dimensions.");
REGISTER_OP("Any")
    .Input("input: bool")
    .Input("reduction_indices: Tidx")
    .Output("output: bool")
    .Attr("keep_dims: bool = false")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Logical or of the input over the reduction dimensions.");

DF_ARG_OP("ArgMax").Doc("The index of the largest value along a dimension (the first on ties).");
DF_ARG_OP("ArgMin").Doc("The index of the smallest value along a dimension (the first on ties).");

REGISTER_OP("AddN")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("T: numbertypes")
    .SetIsCommutative()
    .SetIsAggregate()
    .SetShapeFn(AddNShape)
    .Doc("Adds all inputs elementwise; they must have one shape.");

REGISTER_OP("BroadcastGradientArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Output("r1: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(BroadcastGradientArgsShape)
    .Doc(
        "For the shapes s0 and s1 of two broadcast operands, the output "
        "dimensions each operand's gradient must be summed over.");

REGISTER_OP("MatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: {bfloat16, float, double, int32, int64}")
    .Attr("grad_a: bool = false")
    .Attr("grad_b: bool = false")
    .SetShapeFn(MatMulShape)
    .Doc("Multiplies matrix a by matrix b, either transposed first.");

REGISTER_OP("BatchMatMulV2")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr("T: {bfloat16, float, double, int16, int32, int64}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    .SetShapeFn(BatchMatMulV2Shape)
    .Doc(
        "Multiplies the matrices in the last two dimensions of x and y, "
        "broadcasting the batch dimensions.");

REGISTER_OP("Bucketize")
    .Input("input: T")
    .Output("output: int32")
    .Attr("T: {int32, int64, float, double}")
    .Attr("boundaries: list(float)")
    .SetShapeFn(UnchangedShape)
    .Doc(
        "The bucket of each element: the number of (sorted) boundaries less than or equal to "
        "it.");

#undef DF_BINARY_OP
#undef DF_UNARY_OP
#undef DF_UNARY_GRAD_OP
#undef DF_COMPARISON_OP
#undef DF_EQUALITY_OP
#undef DF_REDUCTION_OP
#undef DF_ARG_OP
}  // namespace distflow
