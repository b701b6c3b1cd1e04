// TensorSlice: a box inside a tensor, one extent (start, length) per
// dimension, where an extent may be "the whole dimension". Checkpoints use it
// as TensorFlow does: SaveV2/RestoreV2's shape_and_slices strings
// ("4 5 0,2:-"), the `slices` of a partitioned variable's bundle entry, and
// the key each saved slice is stored under. A value type; thread-compatible.
#ifndef DISTFLOW_FRAMEWORK_TENSOR_SLICE_H_
#define DISTFLOW_FRAMEWORK_TENSOR_SLICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/tensor_slice.pb.h"

namespace distflow {

class TensorSlice {
 public:
  // The length of an extent that covers its whole dimension.
  static constexpr int64_t kFullExtent = -1;

  // The whole of a tensor of rank `dims`.
  explicit TensorSlice(int dims = 0);

  // Parses TensorFlow's text form: extents joined by ':', each "-" (whole)
  // or "start,length". InvalidArgument naming the text otherwise.
  static absl::StatusOr<TensorSlice> Parse(absl::string_view text);
  // InvalidArgument for a negative start or length (a checkpoint reader
  // reports it as DataLoss naming its file).
  static absl::StatusOr<TensorSlice> FromProto(const TensorSliceProto& proto);
  // Whole extents are written without start and length, as TensorFlow does.
  void ToProto(TensorSliceProto* proto) const;

  int dims() const { return static_cast<int>(starts_.size()); }
  int64_t start(int d) const { return starts_[d]; }
  int64_t length(int d) const { return lengths_[d]; }
  bool IsFullAt(int d) const { return lengths_[d] == kFullExtent; }
  // "0,2:-"; "" for rank 0.
  std::string DebugString() const;

  // OK iff the slice has the rank of `shape` and every extent lies inside
  // it; InvalidArgument naming both otherwise.
  absl::Status CheckFits(const TensorShape& shape) const;
  // The same box with every extent explicit. REQUIRES: CheckFits(shape).
  TensorSlice Resolve(const TensorShape& shape) const;
  // The shape of the box. REQUIRES: CheckFits(shape).
  TensorShape SliceShape(const TensorShape& shape) const;
  // True iff the box is all of `shape`. REQUIRES: CheckFits(shape).
  bool Covers(const TensorShape& shape) const;

  friend bool operator==(const TensorSlice& a, const TensorSlice& b) {
    return a.starts_ == b.starts_ && a.lengths_ == b.lengths_;
  }

 private:
  std::vector<int64_t> starts_;
  std::vector<int64_t> lengths_;
};

// Parses a shape_and_slices entry, "dim0 dim1 ... slice" (e.g. "4 5 0,2:-"):
// the full tensor's shape, then the slice of it. InvalidArgument naming the
// entry when it is malformed or the slice does not fit the shape.
absl::Status ParseShapeAndSlice(absl::string_view spec, TensorShape* shape, TensorSlice* slice);

// The key under which a checkpoint stores slice `slice` of tensor `name`:
// TensorFlow's ordered-code encoding (0, name, rank, then start and length
// of each extent), so TensorFlow finds the slices distflow saves and the
// other way round. It begins with a NUL byte, which no tensor name does.
std::string SliceKey(absl::string_view name, const TensorSlice& slice);

// The number of elements in both boxes, which have explicit extents
// (Resolve). REQUIRES: same rank.
int64_t OverlapElements(const TensorSlice& a, const TensorSlice& b);

// Copies the elements where two boxes of one tensor overlap, from `src`
// (which holds box `src_box`) into `dst` (which holds box `dst_box`), and
// returns how many it copied. Both boxes have explicit extents (Resolve).
// REQUIRES: same rank and dtype; each tensor's shape is its box's shape.
int64_t CopySliceOverlap(const Tensor& src, const TensorSlice& src_box, const TensorSlice& dst_box,
                         Tensor* dst);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_TENSOR_SLICE_H_
