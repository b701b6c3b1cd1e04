// Helpers the array kernels share: reading their small index inputs (shape,
// perm, axis, begin, multiples, ...) into int64 values with errors that name
// the input, turning an output shape computed by the shared shape rules
// (framework/array_shapes.h) into an exact TensorShape, and producing ranges
// and strided boxes of a tensor (Split, Unpack, Slice, StridedSlice) as views
// of the input's buffer where that is safe.
#ifndef DISTFLOW_KERNELS_ARRAY_KERNEL_UTIL_H_
#define DISTFLOW_KERNELS_ARRAY_KERNEL_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "distflow/framework/op_kernel.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/types.h"

namespace distflow {

// The values of `t`, a 1-D int32 or int64 tensor named `name` in errors.
absl::Status IndexVector(const Tensor& t, absl::string_view name, std::vector<int64_t>* out);

// The value of `t`, an int32 or int64 scalar named `name` in errors.
absl::Status IndexScalar(const Tensor& t, absl::string_view name, int64_t* out);

// `shape` as a TensorShape. Internal if it is not fully defined (a kernel
// passed the shape rules an inexact shape), InvalidArgument if its element
// count overflows int64.
absl::Status ExactShape(const PartialTensorShape& shape, TensorShape* out);

// Row-major element strides of `shape`.
DimVector RowMajorStrides(const TensorShape& shape);

// Sets output `index` of `ctx` to `shape.num_elements()` consecutive
// elements of `input`'s flat buffer starting at element `start`. The output
// is a view sharing input's buffer when its first element is 64-byte aligned
// (the alignment Tensor gives its own buffers, which kernels may rely on);
// otherwise it is a copy. REQUIRES: the range lies inside input.
void SetFlatRangeOutput(OpKernelContext* ctx, int index, const Tensor& input, int64_t start,
                        const TensorShape& shape);

// Sets output `index` of `ctx` to the box of `input` that takes, in each dim
// d, size[d] elements starting at begin[d] and stepping stride[d], laid out
// as `out_shape` (same element count). A box that is one contiguous run of
// the input goes through SetFlatRangeOutput; others are copied.
// REQUIRES: the box lies inside input.
void SetStridedBoxOutput(OpKernelContext* ctx, int index, const Tensor& input,
                         absl::Span<const int64_t> begin, absl::Span<const int64_t> stride,
                         absl::Span<const int64_t> size, const TensorShape& out_shape);

// The element types the data-moving array kernels accept: every number type,
// bool and string.
std::vector<DataType> ArrayKernelTypes();

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_ARRAY_KERNEL_UTIL_H_
