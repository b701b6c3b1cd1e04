// Tensor: a typed, shaped view of a reference-counted buffer. Copying a
// Tensor is cheap (it shares the buffer); Slice and reshaping share it too.
// Buffers are 64-byte aligned. A Tensor object is a value: concurrent const
// use is safe; the element data is not synchronized.
#ifndef DISTFLOW_FRAMEWORK_TENSOR_H_
#define DISTFLOW_FRAMEWORK_TENSOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "distflow/core/logging.h"
#include "distflow/core/refcount.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/types.h"

namespace distflow {

// Memory holding tensor elements. Subclasses own (or borrow) the bytes.
class TensorBuffer : public RefCounted {
 public:
  TensorBuffer(void* data, size_t size) : data_(data), size_(size) {}
  void* data() const { return data_; }
  size_t size() const { return size_; }
  // The buffer that owns the memory (itself unless this is a sub-range).
  virtual const TensorBuffer* root() const { return this; }

 private:
  void* const data_;
  const size_t size_;
};

// The largest buffer, in bytes, that one tensor allocated from input may
// have (Tensor::Allocate fails with ResourceExhausted beyond it). 0 means no
// cap beyond what the allocator can give. The default is the machine's
// physical memory, or the value of the environment variable
// DISTFLOW_MAX_TENSOR_BYTES when it holds a non-negative integer.
// Thread-safe.
int64_t MaxTensorBytes();
void SetMaxTensorBytes(int64_t bytes);

// Bytes a buffer for `num_elements` elements of `dtype` occupies, or -1 when
// that overflows int64.
int64_t TensorBufferBytes(DataType dtype, int64_t num_elements);

// Wraps memory owned elsewhere; `release` runs when the last reference goes
// (e.g. to free an RPC payload the tensor was decoded in place from).
RefPtr<TensorBuffer> MakeExternalBuffer(void* data, size_t size, std::function<void()> release);

class Tensor {
 public:
  // An uninitialized tensor of type DT_INVALID.
  Tensor() = default;
  // Drops the buffer and becomes what Tensor() is, without building and
  // moving a temporary (the executor does this once per consumed input).
  void Clear() {
    dtype_ = DT_INVALID;
    shape_.Clear();
    buf_.reset();
  }
  // Allocates a tensor. Numeric elements are uninitialized; strings and
  // resource handles are empty. For sizes the program itself chose: it
  // throws std::bad_alloc when memory (or the process's memory budget,
  // core/memory_budget.h) runs out. Sizes derived from input
  // (a graph, a feed, a file, a message) go through Allocate instead.
  // REQUIRES: DataTypeIsSupported(dtype) or dtype == DT_RESOURCE.
  Tensor(DataType dtype, const TensorShape& shape);
  // Allocates like the constructor, but fails instead of throwing or
  // aborting: InvalidArgument for an unsupported dtype, ResourceExhausted
  // ("OOM when allocating tensor of shape [...] and type T[ for node 'N']:
  // why") when the byte size overflows, exceeds MaxTensorBytes(), does not
  // fit in the process's memory budget (core/memory_budget.h) or the
  // allocator has no memory. `node` names the node the tensor is for, if any.
  static absl::Status Allocate(DataType dtype, const TensorShape& shape, Tensor* out,
                               absl::string_view node = {});
  // Views `buf` as a tensor. REQUIRES: buf holds at least the needed bytes.
  Tensor(DataType dtype, const TensorShape& shape, RefPtr<TensorBuffer> buf);

  // A scalar holding `value`.
  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t(DataTypeToEnum<T>::value, TensorShape());
    t.scalar<T>() = std::move(value);
    return t;
  }
  // A tensor of `shape` holding `values` in row-major order.
  // REQUIRES: values.size() == shape.num_elements().
  template <typename T>
  static Tensor FromVector(absl::Span<const T> values, const TensorShape& shape) {
    Tensor t(DataTypeToEnum<T>::value, shape);
    DF_CHECK(static_cast<int64_t>(values.size()) == shape.num_elements());
    T* p = t.base<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
    return t;
  }
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values) {
    return FromVector<T>(absl::Span<const T>(values),
                         TensorShape({static_cast<int64_t>(values.size())}));
  }

  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64_t dim_size(int d) const { return shape_.dim_size(d); }
  int64_t NumElements() const { return shape_.num_elements(); }
  // True iff the tensor has a buffer (or is empty with a valid dtype).
  bool IsInitialized() const;
  // Bytes of element data (for strings, the sum of their lengths).
  size_t TotalBytes() const;
  bool IsSameSize(const Tensor& other) const { return shape_ == other.shape_; }

  // Raw data pointer. REQUIRES: dtype matches T.
  template <typename T>
  T* base() const {
    DF_DCHECK(DataTypeToEnum<T>::value == dtype_);
    return static_cast<T*>(data_);
  }
  void* raw_data() const { return data_; }

  template <typename T>
  absl::Span<T> flat() {
    return absl::Span<T>(base<T>(), static_cast<size_t>(NumElements()));
  }
  template <typename T>
  absl::Span<const T> flat() const {
    return absl::Span<const T>(base<T>(), static_cast<size_t>(NumElements()));
  }
  // REQUIRES: NumElements() == 1.
  template <typename T>
  T& scalar() {
    DF_DCHECK(NumElements() == 1);
    return *base<T>();
  }
  template <typename T>
  const T& scalar() const {
    DF_DCHECK(NumElements() == 1);
    return *base<T>();
  }

  // Makes this tensor share `other`'s buffer with a new shape; returns false
  // (and changes nothing) unless the element counts match.
  bool CopyFrom(const Tensor& other, const TensorShape& shape);
  // Rows [start, limit) of dimension 0, sharing the buffer.
  // REQUIRES: dims() >= 1 and 0 <= start <= limit <= dim_size(0).
  Tensor Slice(int64_t start, int64_t limit) const;
  // A tensor with its own copy of the elements.
  Tensor DeepCopy() const;

  bool SharesBufferWith(const Tensor& other) const;
  // True iff no other Tensor shares this buffer, so it may be reused in place.
  bool RefCountIsOne() const;
  TensorBuffer* buffer() const { return buf_.get(); }

  // "Tensor<type: float32 shape: [2,2] values: [1 2][3 4]>".
  std::string DebugString(int max_entries = 6) const;
  // The first `max_entries` values, nested by dimension, e.g. "[[1 2][3 4]]".
  std::string SummarizeValue(int64_t max_entries) const;

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  RefPtr<TensorBuffer> buf_;
  void* data_ = nullptr;
};

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_TENSOR_H_
