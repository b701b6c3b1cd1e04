// Interprets StridedSlice's begin/end/strides vectors and its five masks
// against an input shape, with NumPy/TensorFlow semantics: negative indices
// count from the end, out-of-range bounds clamp, negative strides walk
// backwards, one ellipsis expands to the dims not otherwise indexed (an
// implicit one trails the spec), new axes insert size-1 dims, and shrunk axes
// index a single element and drop the dim.
//
// The shape function and the kernel both use this, so they agree on the
// output shape and on every error. With an exact input shape the spec is
// exact; with unknown dims the sizes of those dims are -1.
#ifndef DISTFLOW_FRAMEWORK_STRIDED_SLICE_SPEC_H_
#define DISTFLOW_FRAMEWORK_STRIDED_SLICE_SPEC_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {

struct StridedSliceMasks {
  int64_t begin_mask = 0;
  int64_t end_mask = 0;
  int64_t ellipsis_mask = 0;
  int64_t new_axis_mask = 0;
  int64_t shrink_axis_mask = 0;
};

struct StridedSliceSpec {
  // One entry per input dimension: the first index taken, the step between
  // taken indices, and how many are taken (1 for a shrunk dim, -1 when the
  // input dim is unknown). `begin` is meaningful only where size > 0.
  DimVector begin;
  DimVector stride;
  DimVector size;
  // The output's shape: `size` without the shrunk dims, with the new axes.
  PartialTensorShape final_shape;
};

// Fills `spec` for an input of shape `input`. When the rank of `input` is
// unknown, only final_shape is set (to unknown). InvalidArgument, naming the
// index, when the vectors differ in length, a stride is 0, there is more than
// one ellipsis, the spec indexes more dims than the input has, or a shrunk
// index is out of bounds.
absl::Status ComputeStridedSlice(const PartialTensorShape& input, absl::Span<const int64_t> begin,
                                 absl::Span<const int64_t> end, absl::Span<const int64_t> strides,
                                 const StridedSliceMasks& masks, StridedSliceSpec* spec);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_STRIDED_SLICE_SPEC_H_
