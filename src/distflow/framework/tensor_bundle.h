// Checkpoint files: a set of named tensors written at a path prefix, read
// back whole or not at all. SaveV2/RestoreV2 use it; so can anything that
// saves variables.
//
// A checkpoint at prefix P is two files:
//
//   P.data-00000-of-00001   the tensors' payloads back to back, in the order
//                           they were added. Numbers and bools are their raw
//                           little-endian element bytes; a string tensor is,
//                           per element, a u64 length then the bytes.
//   P.index                 little-endian binary:
//       "DFBUNDLE"  u32 version (1)  u32 num_entries
//       u64 data_file_size  u32 data_file_crc32c
//       num_entries times, sorted by name:
//         u32 name_length  name bytes  u32 dtype (DataType enum value)
//         u32 rank  rank x i64 dims  u64 offset  u64 size
//         u32 crc32c of the payload bytes [offset, offset + size)
//       u32 crc32c of every index byte before it
//
// Each file is written to a temporary name and renamed into place, the data
// file first, so a reader sees whole files; a data file that does not match
// its index (a save interrupted between the two renames) fails the checksums
// and is reported as DataLoss, never read as tensors.
//
// Errors name what was wrong: NotFound for a checkpoint or tensor that does
// not exist; DataLoss naming the file (and the tensor whose bytes are
// affected, where one is) for a truncated or corrupted file; InvalidArgument
// naming the tensor for a dtype or shape other than the one asked for.
//
// BundleWriter and BundleReader are not thread-safe; a BundleReader's const
// methods may be called concurrently.
#ifndef DISTFLOW_FRAMEWORK_TENSOR_BUNDLE_H_
#define DISTFLOW_FRAMEWORK_TENSOR_BUNDLE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {

// "P.data-00000-of-00001" and "P.index".
std::string BundleDataFilename(absl::string_view prefix);
std::string BundleIndexFilename(absl::string_view prefix);

// Parses TensorFlow's shape_and_slice form "dim0 dim1 ... slice", e.g.
// "4 5 -:-", into the full shape. Only whole-tensor slices ("-" or
// "0,dim" per dim) are supported: Unimplemented for a partial slice,
// InvalidArgument for a malformed spec.
absl::Status ParseShapeAndSlice(absl::string_view spec, TensorShape* shape);

class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix);
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Adds `tensor` as `name`. InvalidArgument naming the tensor for an empty
  // or repeated name or a dtype checkpoints cannot hold (refs, resources).
  absl::Status Add(absl::string_view name, const Tensor& tensor);

  // Writes both files (creating the prefix's directory when needed).
  // REQUIRES: called once, after the Adds.
  absl::Status Finish();

 private:
  struct Pending {
    DataType dtype;
    TensorShape shape;
    uint64_t offset;
    uint64_t size;
    uint32_t crc;
  };
  const std::string prefix_;
  std::string data_;
  std::map<std::string, Pending> entries_;
};

class BundleReader {
 public:
  // What the index says about one tensor.
  struct Entry {
    DataType dtype = DT_INVALID;
    TensorShape shape;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint32_t crc = 0;
  };

  // Reads both files and verifies them whole: the index's own checksum, the
  // data file's size and checksum. NotFound when there is no checkpoint at
  // `prefix`; DataLoss for a missing, truncated or corrupted file.
  static absl::StatusOr<std::unique_ptr<BundleReader>> Open(const std::string& prefix);

  // The entry for `name`, or nullptr.
  const Entry* Find(absl::string_view name) const;
  // Every tensor name, sorted.
  std::vector<std::string> Names() const;

  // The tensor `name`, which must have dtype `dtype`. NotFound naming the
  // tensor and the checkpoint when absent; InvalidArgument naming both
  // dtypes when they differ; DataLoss when its bytes do not decode.
  absl::StatusOr<Tensor> Read(absl::string_view name, DataType dtype) const;

 private:
  explicit BundleReader(std::string prefix) : prefix_(std::move(prefix)) {}
  absl::Status ParseIndex(const std::string& index_file, absl::string_view index,
                          uint64_t* data_size, uint32_t* data_crc);
  absl::Status CheckData(uint64_t data_size, uint32_t data_crc) const;

  const std::string prefix_;
  std::string data_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_TENSOR_BUNDLE_H_
