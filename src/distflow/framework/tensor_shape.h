// Tensor shapes. TensorShape is fully known (every dim >= 0) and is what a
// Tensor has; PartialTensorShape may have an unknown rank or unknown (-1)
// dims and is what shape inference and Placeholder attrs work with.
// Both are values: copy freely; not synchronized.
#ifndef DISTFLOW_FRAMEWORK_TENSOR_SHAPE_H_
#define DISTFLOW_FRAMEWORK_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "distflow/tensor_shape.pb.h"

namespace distflow {

using DimVector = absl::InlinedVector<int64_t, 4>;

class TensorShape {
 public:
  TensorShape() = default;  // a scalar: 0 dims, 1 element
  TensorShape(std::initializer_list<int64_t> dims);
  // REQUIRES: every dim >= 0. Use BuildTensorShape for input. When the
  // element count overflows int64, num_elements() is -1 (never a wrapped
  // count) and allocating a tensor of the shape fails.
  explicit TensorShape(absl::Span<const int64_t> dims);

  // Builds a shape from untrusted dims: InvalidArgument naming the bad dim on
  // a negative size or an element count that overflows int64.
  static absl::Status BuildTensorShape(absl::Span<const int64_t> dims, TensorShape* out);
  // InvalidArgument on unknown rank, unknown dims or overflow.
  static absl::Status FromProto(const TensorShapeProto& proto, TensorShape* out);

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t dim_size(int d) const { return dims_[d]; }
  int64_t num_elements() const { return num_elements_; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }

  // REQUIRES: size >= 0 (see the constructor for overflow). Use
  // AddDimWithStatus for sizes from input.
  void AddDim(int64_t size);
  // InvalidArgument on a negative size or an element count overflowing int64.
  absl::Status AddDimWithStatus(int64_t size);
  void InsertDim(int d, int64_t size);
  void RemoveDim(int d);
  void set_dim(int d, int64_t size);
  void Clear();

  bool IsSameSize(const TensorShape& other) const { return dims_ == other.dims_; }
  bool operator==(const TensorShape& other) const { return dims_ == other.dims_; }
  bool operator!=(const TensorShape& other) const { return dims_ != other.dims_; }

  // "[2,3]"; a scalar is "[]".
  std::string DebugString() const;
  void AsProto(TensorShapeProto* proto) const;

 private:
  void Recompute();
  DimVector dims_;
  int64_t num_elements_ = 1;
};

class PartialTensorShape {
 public:
  PartialTensorShape() = default;  // unknown rank
  PartialTensorShape(std::initializer_list<int64_t> dims);
  // Dims of -1 are unknown. REQUIRES: every dim >= -1.
  explicit PartialTensorShape(absl::Span<const int64_t> dims);
  PartialTensorShape(const TensorShape& shape);  // NOLINT: implicit on purpose

  static PartialTensorShape Unknown() { return PartialTensorShape(); }
  // A known rank with every dim unknown.
  static PartialTensorShape UnknownDims(int rank);
  // InvalidArgument for dims < -1.
  static absl::Status FromProto(const TensorShapeProto& proto, PartialTensorShape* out);

  bool unknown_rank() const { return unknown_rank_; }
  // -1 when the rank is unknown.
  int dims() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }
  // -1 when unknown. REQUIRES: rank known and 0 <= d < dims().
  int64_t dim_size(int d) const { return dims_[d]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  // -1 unless fully defined.
  int64_t num_elements() const;

  bool IsFullyDefined() const;
  // Returns false unless fully defined.
  bool AsTensorShape(TensorShape* out) const;
  // True iff some fully-defined shape matches both.
  bool IsCompatibleWith(const PartialTensorShape& other) const;
  // True iff `shape` is one of the shapes this partial shape describes.
  bool IsCompatibleWith(const TensorShape& shape) const;
  // The most specific shape compatible with both; InvalidArgument if none.
  absl::Status MergeWith(const PartialTensorShape& other, PartialTensorShape* result) const;
  // Same rank and same dims (unknown equals unknown).
  bool IsIdenticalTo(const PartialTensorShape& other) const;

  // REQUIRES: size >= 0 (see the constructor for overflow). Use
  // AddDimWithStatus for sizes from input.
  void AddDim(int64_t size);
  // InvalidArgument on a negative size or an element count overflowing int64.
  absl::Status AddDimWithStatus(int64_t size);
  void set_dim(int d, int64_t size) { dims_[d] = size; }

  // "[2,?]" or "<unknown>".
  std::string DebugString() const;
  void AsProto(TensorShapeProto* proto) const;

 private:
  bool unknown_rank_ = true;
  DimVector dims_;
};

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_TENSOR_SHAPE_H_
