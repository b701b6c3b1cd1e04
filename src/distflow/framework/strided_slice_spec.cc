#include "distflow/framework/strided_slice_spec.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "distflow/core/status.h"

namespace distflow {
namespace {

// One entry of the spec after the ellipsis is expanded: what to take from one
// input dimension. Dims covered by the ellipsis take everything.
struct DenseIndex {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t stride = 1;
  bool begin_masked = true;
  bool end_masked = true;
  bool shrink = false;
  int sparse_index = -1;  // -1 for dims covered by an ellipsis
};

constexpr int kNewAxis = -1;

}  // namespace

absl::Status ComputeStridedSlice(const PartialTensorShape& input, absl::Span<const int64_t> begin,
                                 absl::Span<const int64_t> end, absl::Span<const int64_t> strides,
                                 const StridedSliceMasks& masks, StridedSliceSpec* spec) {
  const int n = static_cast<int>(begin.size());
  if (end.size() != begin.size() || strides.size() != begin.size()) {
    return errors::InvalidArgument(
        "StridedSlice begin, end and strides must have the same length, got ", begin.size(), ", ",
        end.size(), " and ", strides.size());
  }
  if (n > 64) {
    return errors::InvalidArgument("StridedSlice supports at most 64 indices, got ", n);
  }
  const uint64_t used = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  const uint64_t ellipsis = static_cast<uint64_t>(masks.ellipsis_mask) & used;
  if (std::popcount(ellipsis) > 1) {
    return errors::InvalidArgument(
        "StridedSlice allows at most one ellipsis, but ellipsis_mask is ", masks.ellipsis_mask);
  }
  for (int i = 0; i < n; ++i) {
    if (strides[i] == 0) {
      return errors::InvalidArgument("StridedSlice strides[", i, "] must be non-zero");
    }
  }
  if (input.unknown_rank()) {
    spec->begin.clear();
    spec->stride.clear();
    spec->size.clear();
    spec->final_shape = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }

  const int rank = input.dims();
  auto bit = [](int i) { return uint64_t{1} << i; };
  const uint64_t new_axis = static_cast<uint64_t>(masks.new_axis_mask);
  std::vector<DenseIndex> dense(rank);
  // For each output dim: the input dim it comes from, or kNewAxis.
  std::vector<int> final_dims;
  int next = 0;  // the next input dim to index
  for (int i = 0; i < n; ++i) {
    if (ellipsis & bit(i)) {
      // The ellipsis covers what the indices after it leave over.
      int after = 0;
      for (int j = i + 1; j < n; ++j) {
        if (!(new_axis & bit(j))) ++after;
      }
      const int stop = std::max(next, rank - after);
      for (; next < stop; ++next) final_dims.push_back(next);
    } else if (new_axis & bit(i)) {
      final_dims.push_back(kNewAxis);
    } else {
      if (next >= rank) {
        return errors::InvalidArgument("StridedSlice index ", i, " needs input dimension ", next,
                                       ", but the input has shape ", input.DebugString());
      }
      DenseIndex& d = dense[next];
      d.begin = begin[i];
      d.end = end[i];
      d.stride = strides[i];
      d.begin_masked = (masks.begin_mask & bit(i)) != 0;
      d.end_masked = (masks.end_mask & bit(i)) != 0;
      d.shrink = (masks.shrink_axis_mask & bit(i)) != 0;
      d.sparse_index = i;
      if (!d.shrink) final_dims.push_back(next);
      ++next;
    }
  }
  // Without an ellipsis, the dims after the last index are taken whole.
  for (; next < rank; ++next) final_dims.push_back(next);

  spec->begin.assign(rank, 0);
  spec->stride.assign(rank, 1);
  spec->size.assign(rank, -1);
  for (int k = 0; k < rank; ++k) {
    const DenseIndex& d = dense[k];
    const int64_t dim = input.dim_size(k);
    spec->stride[k] = d.stride;
    if (d.shrink) {
      if (d.stride < 0) {
        return errors::InvalidArgument("StridedSlice index ", d.sparse_index,
                                       " shrinks an axis, which needs a positive stride, got ",
                                       d.stride);
      }
      spec->size[k] = 1;
      spec->stride[k] = 1;
      if (dim < 0) {
        spec->begin[k] = d.begin;
        continue;
      }
      const int64_t x = d.begin < 0 ? d.begin + dim : d.begin;
      if (x < 0 || x >= dim) {
        return errors::InvalidArgument("StridedSlice index ", d.begin, " of dimension ", k,
                                       " is out of bounds for shape ", input.DebugString());
      }
      spec->begin[k] = x;
      continue;
    }
    if (dim < 0) continue;
    // Forward walks take indices in [lo, hi] = [0, dim]; backward walks in
    // [-1, dim - 1], where -1 stands for "before the first element".
    const bool forward = d.stride > 0;
    const int64_t lo = forward ? 0 : -1;
    const int64_t hi = forward ? dim : dim - 1;
    auto canonical = [&](int64_t x, bool masked, bool is_begin) {
      if (masked) return (is_begin == forward) ? lo : hi;
      if (x < 0) x += dim;
      return x < lo ? lo : (x > hi ? hi : x);
    };
    const int64_t b = canonical(d.begin, d.begin_masked, /*is_begin=*/true);
    const int64_t e = canonical(d.end, d.end_masked, /*is_begin=*/false);
    int64_t count = 0;
    if (forward && e > b) {
      count = (e - b + d.stride - 1) / d.stride;
    } else if (!forward && e < b) {
      count = (b - e + (-d.stride) - 1) / (-d.stride);
    }
    spec->begin[k] = b;
    spec->size[k] = count;
  }

  DimVector out;
  for (int k : final_dims) out.push_back(k == kNewAxis ? 1 : spec->size[k]);
  spec->final_shape = PartialTensorShape(out);
  return absl::OkStatus();
}

}  // namespace distflow
