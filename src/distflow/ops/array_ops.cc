// Array ops: constants, placeholders, identities, and the ops that reshape,
// reorder, join, split, index and generate tensors. Names, inputs, outputs and
// attrs follow TensorFlow's. Shape functions give exact shapes when the index
// inputs (shape, perm, axis, begin, ...) are known constants and partial
// shapes otherwise; the shape rules live in framework/array_shapes.h and
// framework/strided_slice_spec.h, shared with the kernels.
#include <algorithm>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/framework/array_shapes.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "distflow/framework/strided_slice_spec.h"
#include "distflow/framework/tensor_proto.h"

namespace distflow {
namespace {

// The shape a partial shape of known rank `rank` has when nothing else is
// known: every dim unknown, or unknown rank when rank < 0.
PartialTensorShape UnknownOfRank(int rank) {
  return rank < 0 ? PartialTensorShape::Unknown() : PartialTensorShape::UnknownDims(rank);
}

// The length of 1-D input i when known, else -1.
int KnownLength(InferenceContext* c, int i) {
  const PartialTensorShape& s = c->input(i);
  if (s.dims() != 1) return -1;
  return static_cast<int>(s.dim_size(0));
}

absl::Status ConstShape(InferenceContext* c) {
  const TensorProto* value;
  DF_RETURN_IF_ERROR(c->GetAttr("value", &value));
  DataType dtype;
  DF_RETURN_IF_ERROR(c->GetAttr("dtype", &dtype));
  if (value->dtype() != dtype) {
    return errors::InvalidArgument("Const value has type ", DataTypeString(value->dtype()),
                                   " but dtype is ", DataTypeString(dtype));
  }
  TensorShape shape;
  DF_RETURN_IF_ERROR(TensorShape::FromProto(value->tensor_shape(), &shape));
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status PlaceholderShape(InferenceContext* c) {
  PartialTensorShape shape;
  DF_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status PlaceholderWithDefaultShape(InferenceContext* c) {
  PartialTensorShape shape;
  DF_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  if (!shape.IsCompatibleWith(c->input(0))) {
    return errors::InvalidArgument(
        "PlaceholderWithDefault input has shape ", c->input(0).DebugString(),
        ", which is not compatible with the shape attr ", shape.DebugString());
  }
  // A feed may replace the default with any shape the attr allows.
  c->set_output(0, shape);
  return absl::OkStatus();
}

absl::Status IdentityNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
  return absl::OkStatus();
}

absl::Status ReshapeShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithRank(1, 1, nullptr));
  std::vector<int64_t> sizes;
  PartialTensorShape out;
  if (c->VectorInputValues(1, &sizes)) {
    DF_RETURN_IF_ERROR(ReshapeOutputShape(c->input(0), sizes, &out));
  } else {
    DF_RETURN_IF_ERROR(c->ShapeFromShapeTensor(1, &out));
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status ShapeShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  c->set_output(0, PartialTensorShape({in.unknown_rank() ? -1 : in.dims()}));
  return absl::OkStatus();
}

absl::Status FillShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithRank(0, 1, nullptr));
  DF_RETURN_IF_ERROR(c->WithScalar(1));
  std::vector<int64_t> dims;
  if (c->VectorInputValues(0, &dims)) {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0) {
        return errors::InvalidArgument("Fill dims[", i, "] = ", dims[i], " must be non-negative");
      }
    }
  }
  PartialTensorShape out;
  DF_RETURN_IF_ERROR(c->ShapeFromShapeTensor(0, &out));
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status TransposeShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithRank(1, 1, nullptr));
  std::vector<int64_t> perm;
  PartialTensorShape out;
  if (c->VectorInputValues(1, &perm)) {
    DF_RETURN_IF_ERROR(TransposeOutputShape(c->input(0), perm, &out));
  } else {
    const int rank = c->input(0).dims();
    out = UnknownOfRank(rank >= 0 ? rank : KnownLength(c, 1));
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status ConcatV2Shape(InferenceContext* c) {
  const int n = c->num_inputs() - 1;
  DF_RETURN_IF_ERROR(c->WithScalar(n));
  std::vector<PartialTensorShape> inputs;
  for (int i = 0; i < n; ++i) inputs.push_back(c->input(i));
  int64_t axis;
  PartialTensorShape out;
  if (c->ScalarInputValue(n, &axis)) {
    DF_RETURN_IF_ERROR(ConcatOutputShape(inputs, axis, &out));
  } else {
    int rank = -1;
    for (const PartialTensorShape& s : inputs) rank = std::max(rank, s.dims());
    out = UnknownOfRank(rank);
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status PackShape(InferenceContext* c) {
  int64_t axis;
  DF_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  std::vector<PartialTensorShape> inputs;
  for (int i = 0; i < c->num_inputs(); ++i) inputs.push_back(c->input(i));
  PartialTensorShape out;
  DF_RETURN_IF_ERROR(PackOutputShape(inputs, axis, &out));
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status UnpackShape(InferenceContext* c) {
  int64_t axis, num;
  DF_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  DF_RETURN_IF_ERROR(c->GetAttr("num", &num));
  PartialTensorShape out;
  DF_RETURN_IF_ERROR(UnpackOutputShape(c->input(0), axis, num, &out));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

absl::Status SplitShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  int64_t num_split, split_dim;
  DF_RETURN_IF_ERROR(c->GetAttr("num_split", &num_split));
  PartialTensorShape out;
  if (c->ScalarInputValue(0, &split_dim)) {
    DF_RETURN_IF_ERROR(SplitOutputShape(c->input(1), split_dim, num_split, &out));
  } else {
    out = UnknownOfRank(c->input(1).dims());
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

absl::Status SliceShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithRank(1, 1, nullptr));
  DF_RETURN_IF_ERROR(c->WithRank(2, 1, nullptr));
  std::vector<int64_t> begin, size;
  const bool begin_known = c->VectorInputValues(1, &begin);
  const bool size_known = c->VectorInputValues(2, &size);
  PartialTensorShape out;
  if (begin_known && size_known) {
    DF_RETURN_IF_ERROR(SliceOutputShape(c->input(0), begin, size, &out));
  } else if (size_known) {
    // Without begin only the explicit sizes are known.
    for (int64_t& s : size) s = std::max<int64_t>(s, -1);
    if (c->input(0).dims() >= 0 && c->input(0).dims() != static_cast<int>(size.size())) {
      return errors::InvalidArgument("Slice size has ", size.size(),
                                     " entries but the input has shape ",
                                     c->input(0).DebugString());
    }
    out = PartialTensorShape(size);
  } else {
    int rank = c->input(0).dims();
    if (rank < 0) rank = std::max(KnownLength(c, 1), KnownLength(c, 2));
    out = UnknownOfRank(rank);
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status StridedSliceShape(InferenceContext* c) {
  for (int i = 1; i <= 3; ++i) DF_RETURN_IF_ERROR(c->WithRank(i, 1, nullptr));
  std::vector<int64_t> begin, end, strides;
  if (!c->VectorInputValues(1, &begin) || !c->VectorInputValues(2, &end) ||
      !c->VectorInputValues(3, &strides)) {
    c->set_output(0, PartialTensorShape::Unknown());
    return absl::OkStatus();
  }
  StridedSliceMasks masks;
  DF_RETURN_IF_ERROR(c->GetAttr("begin_mask", &masks.begin_mask));
  DF_RETURN_IF_ERROR(c->GetAttr("end_mask", &masks.end_mask));
  DF_RETURN_IF_ERROR(c->GetAttr("ellipsis_mask", &masks.ellipsis_mask));
  DF_RETURN_IF_ERROR(c->GetAttr("new_axis_mask", &masks.new_axis_mask));
  DF_RETURN_IF_ERROR(c->GetAttr("shrink_axis_mask", &masks.shrink_axis_mask));
  StridedSliceSpec spec;
  DF_RETURN_IF_ERROR(ComputeStridedSlice(c->input(0), begin, end, strides, masks, &spec));
  c->set_output(0, spec.final_shape);
  return absl::OkStatus();
}

absl::Status ExpandDimsShape(InferenceContext* c) {
  const PartialTensorShape& dim_shape = c->input(1);
  if (dim_shape.num_elements() >= 0 && dim_shape.num_elements() != 1) {
    return errors::InvalidArgument("ExpandDims dim must hold a single value, got shape ",
                                   dim_shape.DebugString());
  }
  int64_t dim;
  PartialTensorShape out;
  if (c->ScalarInputValue(1, &dim)) {
    DF_RETURN_IF_ERROR(ExpandDimsOutputShape(c->input(0), dim, &out));
  } else {
    const int rank = c->input(0).dims();
    out = UnknownOfRank(rank < 0 ? -1 : rank + 1);
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status SqueezeShape(InferenceContext* c) {
  std::vector<int64_t> dims;
  DF_RETURN_IF_ERROR(c->GetAttr("squeeze_dims", &dims));
  PartialTensorShape out;
  DF_RETURN_IF_ERROR(SqueezeOutputShape(c->input(0), dims, &out));
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status TileShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithRank(1, 1, nullptr));
  std::vector<int64_t> multiples;
  PartialTensorShape out;
  if (c->VectorInputValues(1, &multiples)) {
    DF_RETURN_IF_ERROR(TileOutputShape(c->input(0), multiples, &out));
  } else {
    const int rank = c->input(0).dims();
    out = UnknownOfRank(rank >= 0 ? rank : KnownLength(c, 1));
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status GatherV2Shape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(2));
  int64_t batch_dims, axis;
  DF_RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
  const PartialTensorShape& params = c->input(0);
  const PartialTensorShape& indices = c->input(1);
  PartialTensorShape out;
  if (c->ScalarInputValue(2, &axis)) {
    DF_RETURN_IF_ERROR(GatherOutputShape(params, indices, axis, batch_dims, &out));
  } else if (params.dims() >= 0 && indices.dims() >= 0) {
    if (batch_dims < 0) batch_dims += indices.dims();
    out = UnknownOfRank(
        std::max<int>(0, params.dims() + indices.dims() - 1 - static_cast<int>(batch_dims)));
  } else {
    out = PartialTensorShape::Unknown();
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status OneHotShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(1));
  DF_RETURN_IF_ERROR(c->WithScalar(2));
  DF_RETURN_IF_ERROR(c->WithScalar(3));
  int64_t axis;
  DF_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  int64_t depth = -1;
  if (c->ScalarInputValue(1, &depth) && depth < 0) {
    return errors::InvalidArgument("OneHot depth must be non-negative, got ", depth);
  }
  PartialTensorShape out;
  DF_RETURN_IF_ERROR(OneHotOutputShape(c->input(0), depth, axis, &out));
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status RangeShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) DF_RETURN_IF_ERROR(c->WithScalar(i));
  const Tensor* start = c->input_tensor(0);
  const Tensor* limit = c->input_tensor(1);
  const Tensor* delta = c->input_tensor(2);
  int64_t n = -1;
  if (start != nullptr && limit != nullptr && delta != nullptr) {
    DF_ASSIGN_OR_RETURN(n, RangeSize(*start, *limit, *delta));
  }
  c->set_output(0, PartialTensorShape({n}));
  return absl::OkStatus();
}

// indices.shape[:-1] + params.shape[K:], K = indices.shape[-1].
absl::Status GatherNdShape(InferenceContext* c) {
  const PartialTensorShape& params = c->input(0);
  const PartialTensorShape& indices = c->input(1);
  if (params.unknown_rank() || indices.unknown_rank() || indices.dims() == 0 ||
      indices.dim_size(indices.dims() - 1) < 0) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  const int64_t k = indices.dim_size(indices.dims() - 1);
  if (k > params.dims()) {
    return errors::InvalidArgument("GatherNd index tuples have ", k,
                                   " entries but params has rank ", params.dims());
  }
  std::vector<int64_t> dims(indices.dim_sizes().begin(), indices.dim_sizes().end() - 1);
  dims.insert(dims.end(), params.dim_sizes().begin() + k, params.dim_sizes().end());
  c->set_output(0, PartialTensorShape(absl::Span<const int64_t>(dims)));
  return absl::OkStatus();
}

absl::Status WhereShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  c->set_output(0, PartialTensorShape({-1, in.unknown_rank() ? -1 : int64_t{in.dims()}}));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("Const")
    .Output("output: dtype")
    .Attr("value: tensor")
    .Attr("dtype: type")
    .SetShapeFn(ConstShape)
    .Doc("Produces the constant tensor held in attr value.");

REGISTER_OP("Placeholder")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape = { unknown_rank: true }")
    .SetShapeFn(PlaceholderShape)
    .Doc("A value the client must feed; running it unfed is an error.");

REGISTER_OP("PlaceholderWithDefault")
    .Input("input: dtype")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .SetShapeFn(PlaceholderWithDefaultShape)
    .Doc("Passes input through unless the client feeds another value.");

REGISTER_OP("Identity")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(UnchangedShape)
    .Doc("Returns its input, sharing the buffer.");

REGISTER_OP("IdentityN")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type) >= 1")
    .SetShapeFn(IdentityNShape)
    .Doc("Returns each of its inputs, sharing the buffers.");

REGISTER_OP("StopGradient")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(UnchangedShape)
    .Doc("Returns its input; gradients do not flow through it.");

REGISTER_OP("Reshape")
    .Input("tensor: T")
    .Input("shape: Tshape")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .SetShapeFn(ReshapeShape)
    .Doc("Gives tensor a new shape with the same elements; one size may be -1.");

REGISTER_OP("Shape")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ShapeShape)
    .Doc("Returns the shape of input as a 1-D tensor.");

REGISTER_OP("Size")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ScalarShape)
    .Doc("Returns the number of elements of input.");

REGISTER_OP("Rank")
    .Input("input: T")
    .Output("output: int32")
    .Attr("T: type")
    .SetShapeFn(ScalarShape)
    .Doc("Returns the number of dimensions of input.");

REGISTER_OP("Fill")
    .Input("dims: index_type")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index_type: {int32, int64} = DT_INT32")
    .SetShapeFn(FillShape)
    .Doc("A tensor of shape dims with every element equal to the scalar value.");

REGISTER_OP("ZerosLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: type")
    .SetShapeFn(UnchangedShape)
    .Doc("Zeros (false, empty strings) of the shape and type of x.");

REGISTER_OP("OnesLike")
    .Input("x: T")
    .Output("y: T")
    .Attr(
        "T: {bfloat16, float, double, int8, uint8, int16, uint16, int32, "
        "uint32, int64, uint64, bool}")
    .SetShapeFn(UnchangedShape)
    .Doc("Ones (true) of the shape and type of x.");

REGISTER_OP("Transpose")
    .Input("x: T")
    .Input("perm: Tperm")
    .Output("y: T")
    .Attr("T: type")
    .Attr("Tperm: {int32, int64} = DT_INT32")
    .SetShapeFn(TransposeShape)
    .Doc("Permutes the dimensions of x: output dim i is input dim perm[i].");

REGISTER_OP("ConcatV2")
    .Input("values: N * T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ConcatV2Shape)
    .Doc("Joins values along axis (negative counts from the end).");

REGISTER_OP("Pack")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .SetShapeFn(PackShape)
    .Doc("Stacks N tensors of one shape along a new dimension axis.");

REGISTER_OP("Unpack")
    .Input("value: T")
    .Output("output: num * T")
    .Attr("num: int >= 0")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .SetShapeFn(UnpackShape)
    .Doc("Splits value along dimension axis into num tensors without it.");

REGISTER_OP("Split")
    .Input("split_dim: int32")
    .Input("value: T")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .SetShapeFn(SplitShape)
    .Doc("Splits value into num_split equal pieces along split_dim.");

REGISTER_OP("Slice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("size: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .SetShapeFn(SliceShape)
    .Doc("The block of input starting at begin with size (-1: to the end).");

REGISTER_OP("StridedSlice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .SetShapeFn(StridedSliceShape)
    .Doc("NumPy-style strided slicing: input[begin:end:strides] with masks.");

REGISTER_OP("ExpandDims")
    .Input("input: T")
    .Input("dim: Tdim")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tdim: {int32, int64} = DT_INT32")
    .SetShapeFn(ExpandDimsShape)
    .Doc("Inserts a dimension of size 1 at dim (negative counts from the end).");

REGISTER_OP("Squeeze")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("squeeze_dims: list(int) >= 0 = []")
    .SetShapeFn(SqueezeShape)
    .Doc("Removes the listed dimensions of size 1, or all of them.");

REGISTER_OP("GatherNd")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int32, int64}")
    .SetShapeFn(GatherNdShape)
    .Doc(
        "Slices of params at the index tuples in the last dimension of indices: output shape "
        "indices.shape[:-1] + params.shape[K:] for tuples of K.");

REGISTER_OP("Where")
    .Input("input: T")
    .Output("index: int64")
    .Attr("T: {bool, float, double, int32, int64, uint8, int8, int16} = DT_BOOL")
    .SetShapeFn(WhereShape)
    .Doc("The coordinates of the true (non-zero) elements of input, one row each, row-major.");

REGISTER_OP("ReverseV2")
    .Input("tensor: T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Attr("T: type")
    .SetShapeFn(UnchangedShape)
    .Doc("tensor with the order of its elements reversed along each listed axis.");

REGISTER_OP("Tile")
    .Input("input: T")
    .Input("multiples: Tmultiples")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tmultiples: {int32, int64} = DT_INT32")
    .SetShapeFn(TileShape)
    .Doc("Repeats input multiples[i] times along dimension i.");

REGISTER_OP("GatherV2")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Input("axis: Taxis")
    .Attr("batch_dims: int = 0")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int16, int32, int64}")
    .Attr("Taxis: {int32, int64}")
    .SetShapeFn(GatherV2Shape)
    .Doc("Gathers slices of params along axis at the given indices.");

REGISTER_OP("OneHot")
    .Input("indices: TI")
    .Input("depth: int32")
    .Input("on_value: T")
    .Input("off_value: T")
    .Attr("axis: int = -1")
    .Output("output: T")
    .Attr("T: type")
    .Attr("TI: {uint8, int8, int32, int64} = DT_INT64")
    .SetShapeFn(OneHotShape)
    .Doc("One-hot encoding of indices along a new dimension of size depth.");

REGISTER_OP("Range")
    .Input("start: Tidx")
    .Input("limit: Tidx")
    .Input("delta: Tidx")
    .Output("output: Tidx")
    .Attr(
        "Tidx: {bfloat16, float, double, int8, int16, int32, int64, uint16, "
        "uint32} = DT_INT32")
    .SetShapeFn(RangeShape)
    .Doc("The sequence start, start + delta, ... up to but excluding limit.");

}  // namespace distflow
