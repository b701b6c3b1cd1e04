#include "distflow/framework/bundle_index.h"

#include <cstring>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "distflow/core/crc32c.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/core/varint.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/tensor_slice.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"
#include "snappy.h"

namespace distflow {
namespace {

// The format version TensorFlow's writer stamps and this reader accepts.
constexpr int kBundleVersion = 1;

// LevelDB reads the table through this view of the bytes in memory.
class BytesSource : public leveldb::RandomAccessFile {
 public:
  explicit BytesSource(absl::string_view bytes) : bytes_(bytes) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* /*scratch*/) const override {
    if (offset > bytes_.size()) {
      return leveldb::Status::Corruption("read past the end of the file");
    }
    *result = leveldb::Slice(bytes_.data() + offset, std::min<uint64_t>(n, bytes_.size() - offset));
    return leveldb::Status::OK();
  }

 private:
  const absl::string_view bytes_;
};

// LevelDB writes the table into a string.
class StringSink : public leveldb::WritableFile {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  leveldb::Status Append(const leveldb::Slice& data) override {
    out_->append(data.data(), data.size());
    return leveldb::Status::OK();
  }
  leveldb::Status Close() override { return leveldb::Status::OK(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return leveldb::Status::OK(); }

 private:
  std::string* const out_;
};

absl::Status CheckHeader(const std::string& file, const BundleHeaderProto& header) {
  if (header.endianness() != BundleHeaderProto::LITTLE) {
    return errors::Unimplemented("checkpoint index ", file,
                                 " is of a big-endian bundle, which this build does not read");
  }
  const VersionDef& v = header.version();
  bool bad_consumer = false;
  for (int c : v.bad_consumers()) bad_consumer |= c == kBundleVersion;
  if (v.min_consumer() > kBundleVersion || bad_consumer) {
    return errors::Unimplemented("checkpoint index ", file, " needs a reader of bundle version ",
                                 v.min_consumer(), " or later; this build reads version ",
                                 kBundleVersion);
  }
  if (header.num_shards() < 0) {
    return errors::DataLoss("checkpoint index ", file, " has a header with ", header.num_shards(),
                            " shards");
  }
  return absl::OkStatus();
}

absl::Status CheckEntry(const std::string& file, int num_shards, absl::string_view key,
                        const BundleEntryProto& e) {
  auto bad = [&](auto... why) {
    return errors::DataLoss("checkpoint index ", file, " entry '", PrintableKey(key), "' ", why...);
  };
  TensorShape shape;
  if (!TensorShape::FromProto(e.shape(), &shape).ok()) return bad("has a bad shape");
  if (e.offset() < 0 || e.size() < 0) {
    return bad("has a bad byte range (offset ", e.offset(), ", size ", e.size(), ")");
  }
  if (e.slices().empty()) {
    if (e.shard_id() < 0 || e.shard_id() >= num_shards) {
      return bad("is in shard ", e.shard_id(), " of ", num_shards);
    }
    return absl::OkStatus();
  }
  for (const TensorSliceProto& p : e.slices()) {
    absl::StatusOr<TensorSlice> slice = TensorSlice::FromProto(p);
    if (!slice.ok() || !slice->CheckFits(shape).ok()) {
      return bad("has a slice that does not fit its shape ", shape.DebugString());
    }
  }
  return absl::OkStatus();
}

// LevelDB allocates a block's size as the table names it (and a Snappy
// block's uncompressed size as the block names it) before it reads or checks
// the block. So every block handle, and every uncompressed size, is checked
// against the file here first: a crafted index cannot make LevelDB allocate
// more than a small multiple of the index file's own size.
constexpr size_t kFooterSize = 48;       // two handles, padding, the magic
constexpr size_t kBlockTrailerSize = 5;  // compression type, masked CRC
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kMaxSnappyExpansion = 32;  // Snappy cannot expand data more

// The contents of the block at the handle read from the front of `handles`,
// uncompressed into `scratch` when it is a Snappy block and `uncompress`.
absl::StatusOr<absl::string_view> CheckedBlock(const std::string& file, absl::string_view bytes,
                                               absl::string_view* handles, bool uncompress,
                                               std::string* scratch) {
  auto bad = [&](auto... why) {
    return errors::DataLoss("checkpoint index ", file, " is not a well-formed table: ", why...);
  };
  uint64_t offset, size;
  if (!GetVarint64(handles, &offset) || !GetVarint64(handles, &size)) {
    return bad("a block handle is cut off");
  }
  const uint64_t limit = bytes.size() - kFooterSize;
  if (offset > limit || size > limit - offset || kBlockTrailerSize > limit - offset - size) {
    return bad("a block at ", offset, " of ", size, " bytes lies outside the file");
  }
  const absl::string_view block = bytes.substr(offset, size);
  switch (bytes[offset + size]) {
    case leveldb::kNoCompression:
      return block;
    case leveldb::kSnappyCompression: {
      size_t n;
      if (!snappy::GetUncompressedLength(block.data(), block.size(), &n) ||
          n > kMaxSnappyExpansion * block.size() + 64) {
        return bad("a compressed block at ", offset, " has a bad uncompressed size");
      }
      if (!uncompress) return block;
      scratch->resize(n);
      if (!snappy::RawUncompress(block.data(), block.size(), scratch->data())) {
        return bad("a compressed block at ", offset, " does not uncompress");
      }
      return absl::string_view(*scratch);
    }
    default:
      return bad("a block at ", offset, " has unknown compression type ",
                 static_cast<int>(bytes[offset + size]));
  }
}

// Checks every block handle of the table: the footer's two, and the one
// each entry of the index block holds (a data block's).
absl::Status CheckTableBlocks(const std::string& file, absl::string_view bytes) {
  auto bad = [&](auto... why) {
    return errors::DataLoss("checkpoint index ", file, " is truncated or not an index table (",
                            why..., ")");
  };
  if (bytes.size() < kFooterSize) return bad(bytes.size(), " bytes");
  uint64_t magic;
  std::memcpy(&magic, bytes.data() + bytes.size() - 8, 8);
  if (magic != kTableMagic) return bad("no table magic at its end");
  absl::string_view footer = bytes.substr(bytes.size() - kFooterSize);
  std::string scratch;
  DF_RETURN_IF_ERROR(CheckedBlock(file, bytes, &footer, false, &scratch).status());  // metaindex
  DF_ASSIGN_OR_RETURN(absl::string_view index, CheckedBlock(file, bytes, &footer, true, &scratch));
  // The index block: entries (shared, unshared and value lengths as
  // varints, the key's unshared bytes, the value: a block handle), then the
  // restart offsets (u32 each) and their count (u32).
  uint32_t restarts;
  if (index.size() < 4) return bad("its index block has ", index.size(), " bytes");
  std::memcpy(&restarts, index.data() + index.size() - 4, 4);
  if (restarts > (index.size() - 4) / 4) return bad("its index block is malformed");
  absl::string_view entries = index.substr(0, index.size() - 4 - 4 * size_t{restarts});
  while (!entries.empty()) {
    uint64_t shared, unshared, value_size;
    if (!GetVarint64(&entries, &shared) || !GetVarint64(&entries, &unshared) ||
        !GetVarint64(&entries, &value_size) || unshared > entries.size() ||
        value_size > entries.size() - unshared) {
      return bad("its index block is malformed");
    }
    absl::string_view handle = entries.substr(unshared, value_size);
    entries.remove_prefix(unshared + value_size);
    std::string unused;
    DF_RETURN_IF_ERROR(CheckedBlock(file, bytes, &handle, false, &unused).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<BundleIndex> ParseTableIndex(const std::string& file, absl::string_view bytes) {
  DF_RETURN_IF_ERROR(CheckTableBlocks(file, bytes));
  BytesSource source(bytes);
  leveldb::Options options;
  options.paranoid_checks = true;
  leveldb::Table* raw_table = nullptr;
  leveldb::Status s = leveldb::Table::Open(options, &source, bytes.size(), &raw_table);
  if (!s.ok()) {
    return errors::DataLoss("checkpoint index ", file, " is truncated or not an index table (",
                            s.ToString(), ")");
  }
  std::unique_ptr<leveldb::Table> table(raw_table);
  leveldb::ReadOptions read;
  read.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
  it->SeekToFirst();
  BundleIndex index;
  if (!it->Valid() || !it->key().empty()) {
    if (!it->status().ok()) {
      return errors::DataLoss("checkpoint index ", file, " is corrupted (", it->status().ToString(),
                              ")");
    }
    return errors::DataLoss("checkpoint index ", file, " has no header entry (key \"\")");
  }
  if (!index.header.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
    return errors::DataLoss("checkpoint index ", file, " has a header that does not parse");
  }
  DF_RETURN_IF_ERROR(CheckHeader(file, index.header));
  for (it->Next(); it->Valid(); it->Next()) {
    const absl::string_view key(it->key().data(), it->key().size());
    if (key.empty()) {
      return errors::DataLoss("checkpoint index ", file, " has a second header entry");
    }
    BundleEntryProto entry;
    if (!entry.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return errors::DataLoss("checkpoint index ", file, " entry '", PrintableKey(key),
                              "' does not parse");
    }
    if (!index.entries.empty() && key <= index.entries.rbegin()->first) {
      return errors::DataLoss("checkpoint index ", file, " has key '", PrintableKey(key),
                              "' out of order");
    }
    DF_RETURN_IF_ERROR(CheckEntry(file, index.header.num_shards(), key, entry));
    index.entries.emplace_hint(index.entries.end(), std::string(key), std::move(entry));
  }
  if (!it->status().ok()) {
    return errors::DataLoss("checkpoint index ", file, " is corrupted (", it->status().ToString(),
                            ")");
  }
  return index;
}

// DFBUNDLE, little-endian:
//   "DFBUNDLE" u32 version (1) u32 num_entries u64 data_file_size
//   u32 data_file_crc32c, then per entry sorted by name: u32 name_length,
//   name, u32 dtype, u32 rank, rank x i64 dims, u64 offset, u64 size,
//   u32 crc32c of the payload; last, u32 crc32c of every byte before it.
constexpr absl::string_view kDfBundleMagic("DFBUNDLE", 8);

class Cursor {
 public:
  explicit Cursor(absl::string_view bytes) : rest_(bytes) {}
  bool ok() const { return ok_; }
  bool empty() const { return rest_.empty(); }
  template <typename T>
  T Get() {
    T v{};
    if (!ok_ || rest_.size() < sizeof(T)) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, rest_.data(), sizeof(T));
    rest_.remove_prefix(sizeof(T));
    return v;
  }
  absl::string_view GetBytes(uint64_t n) {
    if (!ok_ || rest_.size() < n) {
      ok_ = false;
      return {};
    }
    absl::string_view v = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return v;
  }

 private:
  absl::string_view rest_;
  bool ok_ = true;
};

absl::StatusOr<BundleIndex> ParseDfBundleIndex(const std::string& file, absl::string_view bytes) {
  constexpr size_t kHeader = 8 + 4 + 4 + 8 + 4;
  if (bytes.size() < kHeader + 4) {
    return errors::DataLoss("checkpoint index ", file, " is truncated (", bytes.size(), " bytes)");
  }
  const absl::string_view body = bytes.substr(0, bytes.size() - 4);
  uint32_t stored_crc;
  std::memcpy(&stored_crc, bytes.data() + body.size(), 4);
  if (crc32c::Value(body) != stored_crc) {
    return errors::DataLoss("checkpoint index ", file,
                            " is corrupted or truncated (checksum mismatch)");
  }
  Cursor in(body.substr(kDfBundleMagic.size()));
  const uint32_t version = in.Get<uint32_t>();
  if (version != 1) {
    return errors::DataLoss("checkpoint index ", file, " has DFBUNDLE version ", version,
                            "; this build reads version 1");
  }
  BundleIndex index;
  index.format = BundleIndex::Format::kDfBundle;
  index.header.set_num_shards(1);
  const uint32_t n = in.Get<uint32_t>();
  const uint64_t data_size = in.Get<uint64_t>();
  in.Get<uint32_t>();  // the whole data file's crc: each entry's is checked
  for (uint32_t i = 0; i < n && in.ok(); ++i) {
    const std::string name(in.GetBytes(in.Get<uint32_t>()));
    BundleEntryProto e;
    e.set_dtype(static_cast<DataType>(in.Get<uint32_t>()));
    const uint32_t rank = in.Get<uint32_t>();
    if (!in.ok() || rank > 254) break;
    for (uint32_t d = 0; d < rank; ++d) e.mutable_shape()->add_dim()->set_size(in.Get<int64_t>());
    const uint64_t offset = in.Get<uint64_t>();
    const uint64_t size = in.Get<uint64_t>();
    e.set_crc32c(crc32c::Mask(in.Get<uint32_t>()));
    if (!in.ok()) break;
    if (offset > data_size || size > data_size - offset) {
      return errors::DataLoss("checkpoint index ", file, " entry '", name,
                              "' has a bad byte range");
    }
    e.set_offset(static_cast<int64_t>(offset));
    e.set_size(static_cast<int64_t>(size));
    DF_RETURN_IF_ERROR(CheckEntry(file, 1, name, e));
    if (name.empty() || !index.entries.emplace(name, std::move(e)).second) {
      return errors::DataLoss("checkpoint index ", file, " lists '", name, "' twice or empty");
    }
  }
  if (!in.ok() || !in.empty() || index.entries.size() != n) {
    return errors::DataLoss("checkpoint index ", file, " is malformed");
  }
  return index;
}

}  // namespace

std::string BundleIndexFilename(absl::string_view prefix) { return absl::StrCat(prefix, ".index"); }

std::string BundleDataFilename(absl::string_view prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

std::string PrintableKey(absl::string_view key) { return absl::CHexEscape(key); }

absl::StatusOr<BundleIndex> ParseBundleIndex(const std::string& file, absl::string_view bytes) {
  if (bytes.substr(0, kDfBundleMagic.size()) == kDfBundleMagic) {
    return ParseDfBundleIndex(file, bytes);
  }
  return ParseTableIndex(file, bytes);
}

std::string SerializeBundleIndex(const BundleIndex& index) {
  std::string out;
  StringSink sink(&out);
  leveldb::Options options;
  options.compression = leveldb::kNoCompression;
  leveldb::TableBuilder builder(options, &sink);
  builder.Add("", index.header.SerializeAsString());
  for (const auto& [key, entry] : index.entries) builder.Add(key, entry.SerializeAsString());
  builder.Finish();  // writing into a string cannot fail
  return out;
}

absl::StatusOr<BundleIndex> ReadBundleIndex(absl::string_view prefix) {
  const std::string file = BundleIndexFilename(prefix);
  absl::StatusOr<std::string> bytes = ReadFileToString(file);
  if (absl::IsNotFound(bytes.status())) {
    return errors::NotFound("no checkpoint at '", prefix, "': ", file, " does not exist");
  }
  if (!bytes.ok()) return bytes.status();
  return ParseBundleIndex(file, *bytes);
}

absl::Status WriteBundleIndex(absl::string_view prefix, const BundleIndex& index) {
  return WriteStringToFileAtomic(BundleIndexFilename(prefix), SerializeBundleIndex(index));
}

}  // namespace distflow
