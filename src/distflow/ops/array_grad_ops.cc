// Array ops that gradient functions build: StridedSliceGrad (the gradient of
// StridedSlice and Slice), UnsortedSegmentSum (the dense scatter-add behind
// the gradient of GatherV2) and InvertPermutation (the gradient of
// Transpose). Names, inputs, attrs and semantics follow TensorFlow's.
#include <cstdint>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "distflow/framework/strided_slice_spec.h"

namespace distflow {
namespace {

// Output 0 has the shape given by the value of input 0, and the spec must
// slice dy's shape out of it when both are known.
absl::Status StridedSliceGradShape(InferenceContext* c) {
  PartialTensorShape out;
  DF_RETURN_IF_ERROR(c->ShapeFromShapeTensor(0, &out));
  c->set_output(0, out);
  std::vector<int64_t> begin, end, strides;
  if (!out.IsFullyDefined() || !c->VectorInputValues(1, &begin) || !c->VectorInputValues(2, &end) ||
      !c->VectorInputValues(3, &strides)) {
    return absl::OkStatus();
  }
  StridedSliceMasks masks;
  DF_RETURN_IF_ERROR(c->GetAttr("begin_mask", &masks.begin_mask));
  DF_RETURN_IF_ERROR(c->GetAttr("end_mask", &masks.end_mask));
  DF_RETURN_IF_ERROR(c->GetAttr("ellipsis_mask", &masks.ellipsis_mask));
  DF_RETURN_IF_ERROR(c->GetAttr("new_axis_mask", &masks.new_axis_mask));
  DF_RETURN_IF_ERROR(c->GetAttr("shrink_axis_mask", &masks.shrink_axis_mask));
  StridedSliceSpec spec;
  DF_RETURN_IF_ERROR(ComputeStridedSlice(out, begin, end, strides, masks, &spec));
  if (!spec.final_shape.IsCompatibleWith(c->input(4))) {
    return errors::InvalidArgument("dy has shape ", c->input(4).DebugString(), " but slicing ",
                                   out.DebugString(), " gives ", spec.final_shape.DebugString());
  }
  return absl::OkStatus();
}

// [num_segments] + data.shape[rank(segment_ids):].
absl::Status UnsortedSegmentSumShape(InferenceContext* c) {
  const PartialTensorShape& data = c->input(0);
  const PartialTensorShape& ids = c->input(1);
  DF_RETURN_IF_ERROR(c->WithScalar(2));
  int64_t num_segments = -1;
  if (c->ScalarInputValue(2, &num_segments) && num_segments < 0) {
    return errors::InvalidArgument("num_segments must be non-negative, got ", num_segments);
  }
  if (data.unknown_rank() || ids.unknown_rank()) {
    c->set_output(0, PartialTensorShape::Unknown());
    return absl::OkStatus();
  }
  if (ids.dims() > data.dims()) {
    return errors::InvalidArgument("segment_ids has shape ", ids.DebugString(),
                                   ", more dims than data ", data.DebugString());
  }
  for (int d = 0; d < ids.dims(); ++d) {
    if (ids.dim_size(d) >= 0 && data.dim_size(d) >= 0 && ids.dim_size(d) != data.dim_size(d)) {
      return errors::InvalidArgument("segment_ids shape ", ids.DebugString(),
                                     " is not a prefix of data shape ", data.DebugString());
    }
  }
  PartialTensorShape out({num_segments});
  for (int d = ids.dims(); d < data.dims(); ++d) out.AddDim(data.dim_size(d));
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status InvertPermutationShape(InferenceContext* c) {
  PartialTensorShape x;
  DF_RETURN_IF_ERROR(c->WithRank(0, 1, &x));
  c->set_output(0, x);
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("StridedSliceGrad")
    .Input("shape: Index")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Input("dy: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .SetShapeFn(StridedSliceGradShape)
    .Doc(
        "Returns a tensor of `shape`: zeros, with dy written where "
        "StridedSlice with the same spec would read.");

REGISTER_OP("UnsortedSegmentSum")
    .Input("data: T")
    .Input("segment_ids: Tindices")
    .Input("num_segments: Tnumsegments")
    .Output("output: T")
    .Attr("T: numbertypes")
    .Attr("Tindices: {int32, int64}")
    .Attr("Tnumsegments: {int32, int64} = DT_INT32")
    .SetShapeFn(UnsortedSegmentSumShape)
    .Doc(
        "output[i, ...] = sum of data[j..., ...] over the j with "
        "segment_ids[j...] == i; negative ids are dropped.");

REGISTER_OP("InvertPermutation")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(InvertPermutationShape)
    .Doc("y[x[i]] = i for a permutation x of [0, n).");

}  // namespace distflow
