// Checkpoint files: named tensors written at a path prefix in TensorFlow's
// tensor bundle V2 format, so TensorFlow reads what distflow saves and the
// other way round. SaveV2, RestoreV2 and MergeV2Checkpoints use it.
//
// A checkpoint at prefix P is
//
//   P.index                    a table of entries (framework/bundle_index.h):
//                              key "" the header (number of data files),
//                              every other key a tensor's dtype, shape, data
//                              file, byte range and masked CRC-32C
//   P.data-0000K-of-0000N      the tensors' bytes back to back
//
// A number or bool tensor's bytes are its little-endian elements. A string
// tensor's are, as TensorFlow lays them out: each element's length as a
// varint64, the masked CRC-32C of those lengths (each taken as a 4-byte
// integer, or 8 when it exceeds 2^32 - 1) as 4 little-endian bytes, then
// the elements' bytes. The entry's CRC covers those same integers, the 4
// bytes and the elements' bytes.
//
// A tensor saved in slices (a partitioned variable) has an entry with its
// full dtype and shape and the list of slices, and no bytes; each slice is
// an entry of its own under SliceKey(name, slice). Reading the tensor (or
// any slice of it) assembles the saved slices.
//
// A BundleWriter writes one data file (N = 1); MergeBundles joins the
// checkpoints of several writers (one per task of a sharded save) into one
// checkpoint with one data file each. Every file is written under a
// temporary name and renamed into place, data file first, so a reader never
// sees half a file; a data file that does not belong to its index fails the
// checksums (DataLoss), never reads as tensors.
//
// Errors name what was wrong: NotFound for a checkpoint or tensor that does
// not exist; DataLoss naming the file and the tensor for a missing,
// truncated or corrupted file; InvalidArgument naming the tensor for a dtype
// or shape other than the one asked for; Unimplemented for a dtype distflow
// cannot hold. Checkpoints of distflow's earlier DFBUNDLE format are read
// too (detected by their index's magic).
//
// BundleWriter is not thread-safe; BundleReader's methods may be called
// concurrently.
#ifndef DISTFLOW_FRAMEWORK_TENSOR_BUNDLE_H_
#define DISTFLOW_FRAMEWORK_TENSOR_BUNDLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "distflow/core/env.h"
#include "distflow/framework/bundle_index.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/tensor_slice.h"

namespace distflow {

class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix);
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Adds `tensor` as `name`. InvalidArgument naming the tensor for an empty
  // or repeated name, one that begins with a NUL byte (slice keys do), or a
  // dtype checkpoints cannot hold (refs, resources). After any error, every
  // later call returns it.
  absl::Status Add(absl::string_view name, const Tensor& tensor);
  // Adds `tensor` as slice `slice` of the tensor `name` of `full_shape`, as
  // TensorFlow saves a partitioned variable. A slice that covers the whole
  // shape is an ordinary Add. InvalidArgument when the slice does not fit
  // `full_shape`, `tensor` does not have the slice's shape, or earlier
  // slices of `name` had another dtype or full shape.
  absl::Status AddSlice(absl::string_view name, const TensorShape& full_shape,
                        const TensorSlice& slice, const Tensor& tensor);

  // Writes the data file, then the index (creating the prefix's directory
  // when needed). REQUIRES: called once, after the Adds.
  absl::Status Finish();

 private:
  absl::Status AddEntry(const std::string& key, const Tensor& tensor);
  absl::Status Write(absl::string_view bytes);
  absl::Status FlushBuffer();

  const std::string prefix_;
  std::unique_ptr<AtomicFileWriter> data_;
  std::string buffer_;  // bytes not yet handed to data_
  int64_t size_ = 0;    // bytes of the data file so far
  BundleIndex index_;
  absl::Status status_;
};

class BundleReader {
 public:
  // Reads the index. NotFound when there is no checkpoint at `prefix`;
  // DataLoss for a damaged index. Data files are opened when first read.
  static absl::StatusOr<std::unique_ptr<BundleReader>> Open(const std::string& prefix);

  const std::string& prefix() const { return prefix_; }
  const BundleIndex& index() const { return index_; }
  // The entry of tensor `name`, or nullptr.
  const BundleEntryProto* Find(absl::string_view name) const;
  // Every tensor's name, sorted; the entries of saved slices are not
  // listed (they are read through their tensor's name).
  std::vector<std::string> Names() const;

  // The whole tensor `name`, which must have dtype `dtype`, assembled from
  // its slices when it was saved in slices.
  absl::StatusOr<Tensor> Read(absl::string_view name, DataType dtype) const;
  // Slice `slice` of tensor `name`, whose shape the caller expects to be
  // `full_shape`. InvalidArgument naming both shapes when the checkpoint's
  // differs, or when the slice does not fit; NotFound when the saved slices
  // do not cover it.
  absl::StatusOr<Tensor> ReadSlice(absl::string_view name, DataType dtype,
                                   const TensorShape& full_shape, const TensorSlice& slice) const;

 private:
  BundleReader(std::string prefix, BundleIndex index)
      : prefix_(std::move(prefix)), index_(std::move(index)) {}
  // The stored bytes of one entry decoded as a tensor; `what` names it in
  // messages ("tensor 'w'" or "slice 0,2:- of tensor 'w'").
  absl::StatusOr<Tensor> ReadEntry(const BundleEntryProto& e, const std::string& what) const;
  absl::StatusOr<const RandomAccessFile*> DataFile(int shard, const std::string& what) const;

  const std::string prefix_;
  const BundleIndex index_;
  mutable absl::Mutex mu_;
  mutable std::vector<std::unique_ptr<RandomAccessFile>> data_files_ ABSL_GUARDED_BY(mu_);
};

// Merges the checkpoints at `prefixes` into one at `merged_prefix`, as
// TensorFlow's MergeV2Checkpoints does: their data files are renamed to
// merged_prefix's data files (one per input data file), their entries
// written to one index (the slices of a tensor saved in slices by several
// inputs joined), and their index files deleted. With `allow_missing_files`
// a prefix without an index is skipped (NotFound otherwise).
// InvalidArgument naming the tensor and prefix when two inputs hold the
// same tensor, or their headers disagree.
absl::Status MergeBundles(absl::Span<const std::string> prefixes, const std::string& merged_prefix,
                          bool allow_missing_files = false);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_TENSOR_BUNDLE_H_
