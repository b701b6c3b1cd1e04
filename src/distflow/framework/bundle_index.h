// The .index file of a checkpoint in TensorFlow's tensor bundle V2 format:
// a table in LevelDB's format (keys sorted bytewise) whose key "" holds a
// BundleHeaderProto and every other key a BundleEntryProto. Read whole into
// memory (an index holds only metadata); written uncompressed, as
// TensorFlow writes it since 1.2, with LevelDB's table builder, whose blocks
// are TensorFlow's byte for byte. Snappy-compressed blocks (some TF 1.x
// files) are read too.
//
// The distflow format before this one, DFBUNDLE (magic "DFBUNDLE" at the
// start of the index), is read here as well and presented as the same
// entries, so that old checkpoints restore (see BundleIndex::format).
//
// Free functions; thread-safe.
#ifndef DISTFLOW_FRAMEWORK_BUNDLE_INDEX_H_
#define DISTFLOW_FRAMEWORK_BUNDLE_INDEX_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/tensor_bundle.pb.h"

namespace distflow {

struct BundleIndex {
  enum class Format {
    kTensorBundleV2,
    // distflow's own format before TensorFlow's, read only: a string tensor
    // is, per element, a u64 length then the bytes, and entries' crc32c
    // fields (masked here like V2's) cover exactly those bytes.
    kDfBundle,
  };
  Format format = Format::kTensorBundleV2;
  BundleHeaderProto header;
  // Every key but "", sorted as the table sorts them.
  std::map<std::string, BundleEntryProto, std::less<>> entries;
};

// "PREFIX.index", and "PREFIX.data-0000K-of-0000N" (shard K of N).
std::string BundleIndexFilename(absl::string_view prefix);
std::string BundleDataFilename(absl::string_view prefix, int shard = 0, int num_shards = 1);

// Parses the bytes of an index file named `file` (used in messages).
// DataLoss naming the file, and the key where there is one, for anything
// that is not a well-formed index: a damaged table, a missing or
// unparseable header, an entry that does not parse, a bad shape, a negative
// offset or size, a shard outside the header's count, or slices that do not
// fit the shape. Unimplemented for a big-endian bundle or one that needs a
// newer reader.
absl::StatusOr<BundleIndex> ParseBundleIndex(const std::string& file, absl::string_view bytes);

// The bytes of `index` as a V2 index file (the header from index.header).
// REQUIRES: index.format == kTensorBundleV2.
std::string SerializeBundleIndex(const BundleIndex& index);

// Reads PREFIX.index: NotFound naming the file when there is none,
// otherwise as ParseBundleIndex.
absl::StatusOr<BundleIndex> ReadBundleIndex(absl::string_view prefix);
// Writes PREFIX.index atomically (temporary name, then rename).
absl::Status WriteBundleIndex(absl::string_view prefix, const BundleIndex& index);

// The key made printable for messages (slice keys hold binary bytes).
std::string PrintableKey(absl::string_view key);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_BUNDLE_INDEX_H_
