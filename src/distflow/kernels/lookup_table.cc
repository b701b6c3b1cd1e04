#include "distflow/kernels/lookup_table.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {

absl::Status HashTable::CheckDtypes(DataType key_dtype, DataType value_dtype) {
  if (key_dtype != DT_STRING && key_dtype != DT_INT32 && key_dtype != DT_INT64) {
    return errors::InvalidArgument("a hash table's keys must be string, int32 or int64, not ",
                                   DataTypeString(key_dtype));
  }
  if (!DataTypeIsSupported(value_dtype)) {
    return errors::InvalidArgument("a hash table cannot hold ", DataTypeString(value_dtype),
                                   " values");
  }
  return absl::OkStatus();
}

namespace {

// values_a[i] == values_b[j], both of `dtype`.
bool SameValue(DataType dtype, const Tensor& a, int64_t i, const Tensor& b, int64_t j) {
  if (dtype == DT_STRING) return a.flat<std::string>()[i] == b.flat<std::string>()[j];
  return std::memcmp(ElementAt(a, i), ElementAt(b, j), ElementBytes(dtype)) == 0;
}

}  // namespace

std::string HashTable::KeyAt(const Tensor& keys, int64_t i) const {
  if (key_dtype_ == DT_STRING) return keys.flat<std::string>()[i];
  const int64_t k = key_dtype_ == DT_INT32 ? keys.flat<int32_t>()[i] : keys.flat<int64_t>()[i];
  std::string bytes(sizeof(k), '\0');
  std::memcpy(bytes.data(), &k, sizeof(k));
  return bytes;
}

absl::Status HashTable::Import(const Tensor& keys, const Tensor& values) {
  if (keys.dtype() != key_dtype_ || values.dtype() != value_dtype_) {
    return errors::InvalidArgument(
        "a table of ", DataTypeString(key_dtype_), " -> ", DataTypeString(value_dtype_),
        " cannot import ", DataTypeString(keys.dtype()), " -> ", DataTypeString(values.dtype()));
  }
  if (keys.shape() != values.shape()) {
    return errors::InvalidArgument("a table's keys (shape ", keys.shape().DebugString(),
                                   ") and values (shape ", values.shape().DebugString(),
                                   ") must have one shape");
  }
  absl::flat_hash_map<std::string, int64_t> index;
  for (int64_t i = 0; i < keys.NumElements(); ++i) {
    auto [it, added] = index.emplace(KeyAt(keys, i), i);
    if (!added && !SameValue(value_dtype_, values, i, values, it->second)) {
      return errors::InvalidArgument("a table's key ", i, " is listed twice with different values");
    }
  }
  absl::MutexLock lock(&mu_);
  if (initialized_) {
    // The init op may run again (a second load of the same graph): fine
    // when it brings the same entries.
    bool same = index.size() == index_.size();
    for (auto it = index.begin(); same && it != index.end(); ++it) {
      auto old = index_.find(it->first);
      same =
          old != index_.end() && SameValue(value_dtype_, values, it->second, values_, old->second);
    }
    if (same) return absl::OkStatus();
    return errors::FailedPrecondition("the table was already filled with other entries");
  }
  index_ = std::move(index);
  values_.CopyFrom(values, TensorShape({values.NumElements()}));
  initialized_ = true;
  return absl::OkStatus();
}

absl::Status HashTable::Find(const Tensor& keys, const Tensor& default_value, Tensor* out) const {
  if (keys.dtype() != key_dtype_) {
    return errors::InvalidArgument("a table of ", DataTypeString(key_dtype_),
                                   " keys cannot look up ", DataTypeString(keys.dtype()), " keys");
  }
  if (default_value.dtype() != value_dtype_ || default_value.NumElements() != 1) {
    return errors::InvalidArgument("the default value must be one ", DataTypeString(value_dtype_),
                                   ", got ", DataTypeString(default_value.dtype()), " ",
                                   default_value.shape().DebugString());
  }
  absl::ReaderMutexLock lock(&mu_);
  if (!initialized_) return errors::FailedPrecondition("the table is not initialized");
  for (int64_t i = 0; i < keys.NumElements(); ++i) {
    auto it = index_.find(KeyAt(keys, i));
    const void* from =
        it == index_.end() ? default_value.raw_data() : ElementAt(values_, it->second);
    CopyElements(value_dtype_, from, 1, ElementAt(*out, i));
  }
  return absl::OkStatus();
}

int64_t HashTable::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return static_cast<int64_t>(index_.size());
}

std::string HashTable::DebugString() const {
  return absl::StrCat("HashTable<", DataTypeString(key_dtype_), ", ", DataTypeString(value_dtype_),
                      ">, ", size(), " entries");
}

}  // namespace distflow
