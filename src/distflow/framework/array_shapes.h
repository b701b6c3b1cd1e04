// Output-shape rules of the array ops (Reshape, Transpose, ConcatV2, Pack,
// Slice, Tile, GatherV2, ...), shared by their shape functions and their CPU
// kernels so that both accept the same inputs and report the same errors.
//
// Each function takes the input shapes, which may be partial during shape
// inference and are exact in kernels, and the values of the op's index inputs
// or attrs, which must be known. It returns the most specific output shape:
// exact whenever the input shapes are exact. Invalid arguments are
// InvalidArgument errors naming the offending value and the bound it broke.
#ifndef DISTFLOW_FRAMEWORK_ARRAY_SHAPES_H_
#define DISTFLOW_FRAMEWORK_ARRAY_SHAPES_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {

// Maps `axis` in [-rank, rank) to [0, rank). InvalidArgument
// "<what> 3 is out of range for a rank-2 tensor, expected [-2, 2)" otherwise.
absl::Status CanonicalAxis(int64_t axis, int rank, absl::string_view what, int* out);

// Reshape to `sizes`, where one entry may be -1 (inferred from the element
// count). Errors name the element counts on both sides.
absl::Status ReshapeOutputShape(const PartialTensorShape& input, absl::Span<const int64_t> sizes,
                                PartialTensorShape* out);

// Transpose with `perm`, which must be a permutation of [0, rank).
absl::Status TransposeOutputShape(const PartialTensorShape& input, absl::Span<const int64_t> perm,
                                  PartialTensorShape* out);

// ExpandDims: inserts a 1 at `dim`, which may be in [-rank-1, rank].
absl::Status ExpandDimsOutputShape(const PartialTensorShape& input, int64_t dim,
                                   PartialTensorShape* out);

// Squeeze: removes the listed dims (each must have size 1), or every dim of
// size 1 when `squeeze_dims` is empty.
absl::Status SqueezeOutputShape(const PartialTensorShape& input,
                                absl::Span<const int64_t> squeeze_dims, PartialTensorShape* out);

// ConcatV2 along `axis`: equal ranks, equal sizes outside the axis.
absl::Status ConcatOutputShape(absl::Span<const PartialTensorShape> inputs, int64_t axis,
                               PartialTensorShape* out);

// Pack: identical input shapes, a new dim of size N inserted at `axis` in
// [-rank-1, rank].
absl::Status PackOutputShape(absl::Span<const PartialTensorShape> inputs, int64_t axis,
                             PartialTensorShape* out);

// Unpack: the shape of each of the `num` outputs; dim `axis` must be `num`.
absl::Status UnpackOutputShape(const PartialTensorShape& input, int64_t axis, int64_t num,
                               PartialTensorShape* out);

// Split: the shape of each of the `num_split` outputs; the split dim must be
// divisible by num_split.
absl::Status SplitOutputShape(const PartialTensorShape& input, int64_t split_dim, int64_t num_split,
                              PartialTensorShape* out);

// Slice: `begin` and `size` (-1 means "to the end") have one entry per dim;
// 0 <= begin[i] <= begin[i] + size[i] <= dim i.
absl::Status SliceOutputShape(const PartialTensorShape& input, absl::Span<const int64_t> begin,
                              absl::Span<const int64_t> size, PartialTensorShape* out);

// Tile: one non-negative multiple per dim.
absl::Status TileOutputShape(const PartialTensorShape& input, absl::Span<const int64_t> multiples,
                             PartialTensorShape* out);

// GatherV2: params[:axis] + indices[batch_dims:] + params[axis+1:]. A
// negative batch_dims counts from the indices' rank; batch_dims <= axis and
// the first batch_dims dims of params and indices must match. `axis_out` and
// `batch_dims_out` (when not null) receive the canonical values; they are only
// meaningful when the ranks are known.
absl::Status GatherOutputShape(const PartialTensorShape& params, const PartialTensorShape& indices,
                               int64_t axis, int64_t batch_dims, PartialTensorShape* out,
                               int* axis_out = nullptr, int* batch_dims_out = nullptr);

// OneHot: the indices' shape with `depth` (-1 when unknown) inserted at
// `axis` (-1 means last).
absl::Status OneHotOutputShape(const PartialTensorShape& indices, int64_t depth, int64_t axis,
                               PartialTensorShape* out);

// The number of elements of Range(start, limit, delta) for three scalars of
// one numeric type. InvalidArgument when delta is 0 or points away from limit.
absl::StatusOr<int64_t> RangeSize(const Tensor& start, const Tensor& limit, const Tensor& delta);

// The element shape a TensorList op's shape input describes: a 1-D int32 or
// int64 tensor, -1 for an unknown dim, or the scalar -1 for an unknown rank.
// InvalidArgument for any other value.
absl::StatusOr<PartialTensorShape> ElementShapeFromTensor(const Tensor& t);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_ARRAY_SHAPES_H_
