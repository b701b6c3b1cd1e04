// NumPy broadcasting for elementwise kernels of up to three inputs.
// BroadcastPlan computes the output shape and a collapsed view of it in which
// every input has, per dimension, either the output's extent (a real stride)
// or extent 1 (stride 0). Adjacent dimensions that broadcast the same way are
// merged, so same-shape and scalar-with-tensor inputs collapse to a single
// dimension and are walked as one contiguous segment.
// A plan is a value: build once per Compute, then const use from any number
// of threads is safe.
#ifndef DISTFLOW_KERNELS_BROADCAST_H_
#define DISTFLOW_KERNELS_BROADCAST_H_

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {

class BroadcastPlan {
 public:
  static constexpr int kMaxInputs = 3;

  // Broadcasts `shapes` (1 to kMaxInputs of them) together. InvalidArgument
  // "incompatible shapes for broadcasting: [2,3] and [4]" when they do not
  // broadcast; with three shapes the first two are broadcast first and the
  // error names that result and the third shape.
  static absl::Status Make(std::initializer_list<TensorShape> shapes, BroadcastPlan* plan);

  const TensorShape& output_shape() const { return output_shape_; }
  int64_t num_elements() const { return output_shape_.num_elements(); }

  // 1 when input `i` advances with the output along the innermost collapsed
  // dimension, 0 when it is broadcast there (one value for a whole segment).
  int64_t inner_stride(int i) const { return strides_[i].back(); }

  // Walks the output elements [begin, end) as contiguous runs along the
  // innermost collapsed dimension, calling
  //   fn(int64_t out_offset, const int64_t* in_offsets, int64_t length)
  // for each run, where in_offsets[i] is input i's element offset at the run's
  // start and input i advances by inner_stride(i) per element.
  // REQUIRES: 0 <= begin <= end <= num_elements().
  template <typename Fn>
  void ForEachSegment(int64_t begin, int64_t end, Fn&& fn) const;

 private:
  int num_inputs_ = 0;
  TensorShape output_shape_;
  // Collapsed output dims (at least one) and, per input, element strides over
  // them (0 where broadcast).
  DimVector dims_;
  DimVector strides_[kMaxInputs];
};

// The NumPy broadcast of `a` and `b`, or InvalidArgument naming both.
absl::Status BroadcastTensorShapes(const TensorShape& a, const TensorShape& b, TensorShape* out);

template <typename Fn>
void BroadcastPlan::ForEachSegment(int64_t begin, int64_t end, Fn&& fn) const {
  if (begin >= end) return;
  const int rank = static_cast<int>(dims_.size());
  const int64_t inner = dims_[rank - 1];
  int64_t col = begin % inner;
  int64_t row = begin / inner;
  DimVector index(rank - 1, 0);
  int64_t row_offset[kMaxInputs] = {0, 0, 0};
  for (int d = rank - 2; d >= 0; --d) {
    index[d] = row % dims_[d];
    row /= dims_[d];
    for (int i = 0; i < num_inputs_; ++i) {
      row_offset[i] += index[d] * strides_[i][d];
    }
  }
  int64_t in_offsets[kMaxInputs] = {0, 0, 0};
  int64_t pos = begin;
  while (true) {
    const int64_t len = std::min(inner - col, end - pos);
    for (int i = 0; i < num_inputs_; ++i) {
      in_offsets[i] = row_offset[i] + col * strides_[i][rank - 1];
    }
    fn(pos, static_cast<const int64_t*>(in_offsets), len);
    pos += len;
    if (pos >= end) return;
    col = 0;
    // Next row: odometer increment over the outer collapsed dims.
    for (int d = rank - 2; d >= 0; --d) {
      for (int i = 0; i < num_inputs_; ++i) row_offset[i] += strides_[i][d];
      if (++index[d] < dims_[d]) break;
      for (int i = 0; i < num_inputs_; ++i) {
        row_offset[i] -= strides_[i][d] * dims_[d];
      }
      index[d] = 0;
    }
  }
}

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_BROADCAST_H_
