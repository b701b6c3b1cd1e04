// Moving tensor elements without looking at them, for the array kernels
// (Slice, StridedSlice, Transpose, Tile, ConcatV2, Pack, Split, Unpack,
// GatherV2). Fixed-size types move as bytes, contiguous runs with one memcpy,
// so each routine is compiled once per element size rather than per type;
// strings are assigned element by element. Counts, offsets and strides are in
// elements. Source and destination must not overlap. Stateless and
// thread-safe.
#ifndef DISTFLOW_KERNELS_ELEMENT_COPY_H_
#define DISTFLOW_KERNELS_ELEMENT_COPY_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/types.h"

namespace distflow {

// Bytes one element occupies in a tensor buffer (sizeof(std::string) for
// strings). REQUIRES: DataTypeIsSupported(dtype).
size_t ElementBytes(DataType dtype);

// The address of element `index` of `t`'s flat buffer.
inline char* ElementAt(const Tensor& t, int64_t index) {
  return static_cast<char*>(t.raw_data()) + index * static_cast<int64_t>(ElementBytes(t.dtype()));
}

// Copies `n` consecutive elements from `src` to `dst`.
void CopyElements(DataType dtype, const void* src, int64_t n, void* dst);

// Fills `dst`, dense and row-major over `sizes`, with the elements
// src[sum_d i_d * src_strides[d]] for every index i within `sizes`. Strides
// may be zero (repetition) or negative (reversal). An empty `sizes` copies one
// element. REQUIRES: sizes.size() == src_strides.size().
void StridedCopy(DataType dtype, const void* src, absl::Span<const int64_t> sizes,
                 absl::Span<const int64_t> src_strides, void* dst);

// Writes `n` copies of the element at `value` to `dst`.
void FillElements(DataType dtype, const void* value, int64_t n, void* dst);

// Gathers blocks of `inner` elements. `src` is viewed as
// [batch, outer, limit, inner] and `indices` as [batch, n]; `dst` receives
// [batch, outer, n, inner] with dst[b, o, j, :] = src[b, o, indices[b, j], :].
// REQUIRES: every index is in [0, limit).
void GatherRows(DataType dtype, const void* src, int64_t batch, int64_t outer, int64_t limit,
                int64_t inner, const int64_t* indices, int64_t n, void* dst);

// Interleaves row blocks: for each of `rows` rows r, appends chunks[i]
// elements of each source i, read from srcs[i] + r * chunks[i]. This is
// concatenation along an axis whose outer dims hold `rows` rows.
void ConcatRows(DataType dtype, absl::Span<const void* const> srcs,
                absl::Span<const int64_t> chunks, int64_t rows, void* dst);

// The inverse of ConcatRows: distributes each row of `src` into the dsts.
void SplitRows(DataType dtype, const void* src, absl::Span<void* const> dsts,
               absl::Span<const int64_t> chunks, int64_t rows);

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_ELEMENT_COPY_H_
