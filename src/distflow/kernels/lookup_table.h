// HashTable: the resource behind TensorFlow's HashTableV2, a read-only map
// from keys (string, int32 or int64) to values of one dtype, filled once by
// LookupTableImportV2 (the initializer a SavedModel's init op runs) and read
// by LookupTableFindV2. Keys are held as bytes (an integer key as its int64
// value), values in one tensor indexed by the map, so every dtype the
// element copies move is supported. Thread-safe: Import locks exclusively,
// Find and size shared.
#ifndef DISTFLOW_KERNELS_LOOKUP_TABLE_H_
#define DISTFLOW_KERNELS_LOOKUP_TABLE_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/framework/resource_mgr.h"
#include "distflow/framework/tensor.h"

namespace distflow {

class HashTable : public ResourceBase {
 public:
  // InvalidArgument (from Create) unless key_dtype is string, int32 or int64.
  HashTable(DataType key_dtype, DataType value_dtype)
      : key_dtype_(key_dtype), value_dtype_(value_dtype) {}
  static absl::Status CheckDtypes(DataType key_dtype, DataType value_dtype);

  DataType key_dtype() const { return key_dtype_; }
  DataType value_dtype() const { return value_dtype_; }

  // Fills the table with keys[i] -> values[i] (same shape). A table fills
  // once: importing the same entries again is a no-op, other entries are
  // FailedPrecondition. A key listed twice with different values is
  // InvalidArgument.
  absl::Status Import(const Tensor& keys, const Tensor& values);

  // out[i] = the value of keys[i], or `default_value` (a scalar) when the
  // table has no such key. FailedPrecondition before the table is filled.
  // REQUIRES: out has keys' shape and the value dtype.
  absl::Status Find(const Tensor& keys, const Tensor& default_value, Tensor* out) const;

  int64_t size() const;
  std::string DebugString() const override;

 private:
  std::string KeyAt(const Tensor& keys, int64_t i) const;

  const DataType key_dtype_;
  const DataType value_dtype_;
  mutable absl::Mutex mu_;
  bool initialized_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<std::string, int64_t> index_ ABSL_GUARDED_BY(mu_);
  Tensor values_ ABSL_GUARDED_BY(mu_);  // 1-D, indexed by index_
};

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_LOOKUP_TABLE_H_
