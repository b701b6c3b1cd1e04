#include "distflow/framework/tensor_bundle.h"

#include <bit>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/crc32c.h"
#include "distflow/core/status.h"
#include "distflow/core/varint.h"

namespace distflow {
namespace {

static_assert(std::endian::native == std::endian::little,
              "checkpoint data files hold the host's little-endian bytes");

// Bytes gathered before a write; tensors larger than this go straight out.
constexpr size_t kWriteBuffer = 4 << 20;

bool CheckpointableType(DataType dtype) {
  return !IsRefType(dtype) && dtype != DT_RESOURCE && DataTypeIsSupported(dtype);
}

// Extends `crc` over a string length as TensorFlow checksums it: a 4-byte
// integer when it fits, else 8 bytes.
uint32_t ExtendLength(uint32_t crc, uint64_t length) {
  if (length <= UINT32_MAX) {
    const uint32_t n = static_cast<uint32_t>(length);
    return crc32c::Extend(crc, reinterpret_cast<const char*>(&n), sizeof(n));
  }
  return crc32c::Extend(crc, reinterpret_cast<const char*>(&length), sizeof(length));
}

// The lengths and the length checksum of a string tensor's bytes (the
// elements' bytes follow them), and the CRC so far.
void EncodeStringLengths(absl::Span<const std::string> strings, std::string* out, uint32_t* crc) {
  *crc = 0;
  for (const std::string& s : strings) {
    PutVarint64(out, s.size());
    *crc = ExtendLength(*crc, s.size());
  }
  const uint32_t masked = crc32c::Mask(*crc);
  out->append(reinterpret_cast<const char*>(&masked), sizeof(masked));
  *crc = crc32c::Extend(*crc, reinterpret_cast<const char*>(&masked), sizeof(masked));
}

// Renames `from` onto `to`, naming both on failure.
absl::Status Rename(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::rename(from, to, ec);
  if (ec) return errors::Internal("cannot rename '", from, "' to '", to, "': ", ec.message());
  return absl::OkStatus();
}

absl::Status CreateParentDir(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) return absl::OkStatus();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return errors::Unavailable("cannot create checkpoint directory ", dir.string(), ": ",
                               ec.message());
  }
  return absl::OkStatus();
}

}  // namespace

BundleWriter::BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {
  index_.header.set_num_shards(1);
  index_.header.mutable_version()->set_producer(1);
}

absl::Status BundleWriter::Add(absl::string_view name, const Tensor& tensor) {
  DF_RETURN_IF_ERROR(status_);
  if (name.empty() || name.front() == '\0') {
    status_ = errors::InvalidArgument(
        "checkpoint tensor names must not be empty or begin with a "
        "NUL byte, got '",
        PrintableKey(name), "'");
    return status_;
  }
  return AddEntry(std::string(name), tensor);
}

absl::Status BundleWriter::AddSlice(absl::string_view name, const TensorShape& full_shape,
                                    const TensorSlice& slice, const Tensor& tensor) {
  DF_RETURN_IF_ERROR(status_);
  absl::Status fits = slice.CheckFits(full_shape);
  if (!fits.ok()) {
    status_ = errors::InvalidArgument("saving tensor '", name, "': ", fits.message());
    return status_;
  }
  if (slice.Covers(full_shape)) return Add(name, tensor);
  if (tensor.shape() != slice.SliceShape(full_shape)) {
    status_ = errors::InvalidArgument("slice ", slice.DebugString(), " of tensor '", name,
                                      "' has shape ", tensor.shape().DebugString(), " but ",
                                      slice.SliceShape(full_shape).DebugString(), " was declared");
    return status_;
  }
  if (name.empty() || name.front() == '\0') return Add(name, tensor);  // reports the name
  auto [it, inserted] = index_.entries.try_emplace(std::string(name));
  BundleEntryProto& full = it->second;
  TensorShape known;
  if (!inserted && (full.slices().empty() || full.dtype() != tensor.dtype() ||
                    !TensorShape::FromProto(full.shape(), &known).ok() || known != full_shape)) {
    status_ =
        errors::InvalidArgument("tensor '", name,
                                "' is saved twice in one checkpoint, or its slices disagree on its "
                                "dtype or full shape");
    return status_;
  }
  full.set_dtype(tensor.dtype());
  full_shape.AsProto(full.mutable_shape());
  slice.ToProto(full.add_slices());
  return AddEntry(SliceKey(name, slice), tensor);
}

absl::Status BundleWriter::AddEntry(const std::string& key, const Tensor& tensor) {
  if (!CheckpointableType(tensor.dtype()) || !tensor.IsInitialized()) {
    status_ =
        errors::InvalidArgument("tensor '", PrintableKey(key), "' of type ",
                                DataTypeString(tensor.dtype()), " cannot be saved in a checkpoint");
    return status_;
  }
  auto [it, inserted] = index_.entries.try_emplace(key);
  if (!inserted) {
    status_ = errors::InvalidArgument("tensor '", PrintableKey(key),
                                      "' is saved twice in one checkpoint");
    return status_;
  }
  BundleEntryProto& e = it->second;
  e.set_dtype(tensor.dtype());
  tensor.shape().AsProto(e.mutable_shape());
  e.set_shard_id(0);
  e.set_offset(size_);
  uint32_t crc;
  if (tensor.dtype() == DT_STRING) {
    absl::Span<const std::string> strings = tensor.flat<std::string>();
    std::string lengths;
    EncodeStringLengths(strings, &lengths, &crc);
    status_ = Write(lengths);
    for (size_t i = 0; i < strings.size() && status_.ok(); ++i) {
      crc = crc32c::Extend(crc, strings[i].data(), strings[i].size());
      status_ = Write(strings[i]);
    }
  } else {
    const absl::string_view bytes(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
    crc = crc32c::Value(bytes);
    status_ = Write(bytes);
  }
  e.set_size(size_ - e.offset());
  e.set_crc32c(crc32c::Mask(crc));
  return status_;
}

absl::Status BundleWriter::Write(absl::string_view bytes) {
  if (data_ == nullptr) {
    DF_RETURN_IF_ERROR(CreateParentDir(prefix_));
    DF_ASSIGN_OR_RETURN(data_, AtomicFileWriter::Create(BundleDataFilename(prefix_, 0, 1)));
  }
  size_ += static_cast<int64_t>(bytes.size());
  if (buffer_.size() + bytes.size() <= kWriteBuffer) {
    buffer_.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  DF_RETURN_IF_ERROR(FlushBuffer());
  if (bytes.size() >= kWriteBuffer) return data_->Append(bytes);
  buffer_.append(bytes.data(), bytes.size());
  return absl::OkStatus();
}

absl::Status BundleWriter::FlushBuffer() {
  absl::Status s = data_->Append(buffer_);
  buffer_.clear();
  return s;
}

absl::Status BundleWriter::Finish() {
  DF_RETURN_IF_ERROR(status_);
  status_ = Write("");  // an empty checkpoint still has its (empty) data file
  if (status_.ok()) status_ = FlushBuffer();
  if (status_.ok()) status_ = data_->Commit();
  if (status_.ok()) status_ = WriteBundleIndex(prefix_, index_);
  DF_RETURN_IF_ERROR(status_);
  status_ = errors::FailedPrecondition("BundleWriter for '", prefix_, "' is finished");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(const std::string& prefix) {
  DF_ASSIGN_OR_RETURN(BundleIndex index, ReadBundleIndex(prefix));
  std::unique_ptr<BundleReader> reader(new BundleReader(prefix, std::move(index)));
  absl::MutexLock lock(&reader->mu_);
  reader->data_files_.resize(reader->index_.header.num_shards());
  return reader;
}

const BundleEntryProto* BundleReader::Find(absl::string_view name) const {
  auto it = index_.entries.find(name);
  return it == index_.entries.end() ? nullptr : &it->second;
}

std::vector<std::string> BundleReader::Names() const {
  std::vector<std::string> names;
  for (const auto& [key, e] : index_.entries) {
    if (key.front() != '\0') names.push_back(key);
  }
  return names;
}

absl::StatusOr<const RandomAccessFile*> BundleReader::DataFile(int shard,
                                                               const std::string& what) const {
  absl::MutexLock lock(&mu_);
  std::unique_ptr<RandomAccessFile>& file = data_files_[shard];
  if (file == nullptr) {
    const std::string name = BundleDataFilename(prefix_, shard, index_.header.num_shards());
    absl::StatusOr<std::unique_ptr<RandomAccessFile>> opened = RandomAccessFile::Open(name);
    if (absl::IsNotFound(opened.status())) {
      return errors::DataLoss("checkpoint '", prefix_, "' is missing its data file ", name,
                              ", which holds ", what);
    }
    if (!opened.ok()) return opened.status();
    file = *std::move(opened);
  }
  return file.get();
}

absl::StatusOr<Tensor> BundleReader::ReadEntry(const BundleEntryProto& e,
                                               const std::string& what) const {
  const DataType dtype = e.dtype();
  if (!CheckpointableType(dtype)) {
    return errors::Unimplemented(what, " in checkpoint '", prefix_, "' is ", DataTypeString(dtype),
                                 ", which distflow cannot hold");
  }
  TensorShape shape;
  DF_RETURN_IF_ERROR(TensorShape::FromProto(e.shape(), &shape));  // checked by the index
  DF_ASSIGN_OR_RETURN(const RandomAccessFile* file, DataFile(e.shard_id(), what));
  const uint64_t offset = static_cast<uint64_t>(e.offset());
  const uint64_t size = static_cast<uint64_t>(e.size());
  if (offset > file->size() || size > file->size() - offset) {
    return errors::DataLoss("checkpoint data file ", file->path(), " is truncated (", file->size(),
                            " bytes): ", what, " is cut off (it needs bytes [", offset, ", ",
                            offset + size, "))");
  }
  auto bad_size = [&] {
    return errors::DataLoss(what, " in checkpoint '", prefix_, "' has ", size,
                            " bytes, which do not hold a ", DataTypeString(dtype),
                            " tensor of shape ", shape.DebugString());
  };
  auto bad_crc = [&] {
    return errors::DataLoss("checksum mismatch for ", what, " in ", file->path(),
                            ": the checkpoint is corrupted");
  };
  // The shape comes from the file: check it against the entry's byte count
  // before allocating, so a claimed shape of [2^62] is an error, not a huge
  // (or, with wrapped arithmetic, tiny) buffer.
  const int64_t n = shape.num_elements();
  Tensor t;
  if (dtype != DT_STRING) {
    int64_t want;
    if (!MultiplyWithoutOverflow<int64_t>(n, DataTypeSize(dtype), &want) ||
        static_cast<uint64_t>(want) != size) {
      return bad_size();
    }
    DF_RETURN_IF_ERROR(
        errors::Annotate(Tensor::Allocate(dtype, shape, &t),
                         absl::StrCat("reading ", what, " from checkpoint '", prefix_, "': ")));
    char* bytes = static_cast<char*>(t.raw_data());
    if (size > 0) DF_RETURN_IF_ERROR(file->Read(offset, size, bytes));
    if (crc32c::Value(absl::string_view(bytes, size)) != crc32c::Unmask(e.crc32c())) {
      return bad_crc();
    }
    if (dtype == DT_BOOL) {  // any nonzero byte is true; never leave another value in a bool
      for (uint64_t i = 0; i < size; ++i) bytes[i] = bytes[i] != 0;
    }
    return t;
  }
  // Every string takes at least one byte (V2's varint, DFBUNDLE's 8-byte length).
  if (static_cast<uint64_t>(n) > size) return bad_size();
  std::string bytes(size, '\0');
  DF_RETURN_IF_ERROR(file->Read(offset, size, bytes.data()));
  DF_RETURN_IF_ERROR(
      errors::Annotate(Tensor::Allocate(dtype, shape, &t),
                       absl::StrCat("reading ", what, " from checkpoint '", prefix_, "': ")));
  absl::Span<std::string> strings = t.flat<std::string>();
  absl::string_view in(bytes);
  if (index_.format == BundleIndex::Format::kDfBundle) {
    if (crc32c::Value(in) != crc32c::Unmask(e.crc32c())) return bad_crc();
    for (std::string& s : strings) {
      uint64_t len;
      if (in.size() < sizeof(len)) return bad_size();
      std::memcpy(&len, in.data(), sizeof(len));
      in.remove_prefix(sizeof(len));
      if (len > in.size()) return bad_size();
      s.assign(in.data(), len);
      in.remove_prefix(len);
    }
    if (!in.empty()) return bad_size();
    return t;
  }
  if (size == 0 && n == 0) return t;
  std::vector<uint64_t> lengths(strings.size());
  uint32_t crc = 0;
  for (uint64_t& len : lengths) {
    if (!GetVarint64(&in, &len)) return bad_size();
    crc = ExtendLength(crc, len);
  }
  uint32_t masked;
  if (in.size() < sizeof(masked)) return bad_size();
  std::memcpy(&masked, in.data(), sizeof(masked));
  if (crc32c::Unmask(masked) != crc) {
    return errors::DataLoss("checksum mismatch for the string lengths of ", what, " in ",
                            file->path(), ": the checkpoint is corrupted");
  }
  crc = crc32c::Extend(crc, in.data(), sizeof(masked));
  in.remove_prefix(sizeof(masked));
  crc = crc32c::Extend(crc, in.data(), in.size());
  if (crc != crc32c::Unmask(e.crc32c())) return bad_crc();
  for (size_t i = 0; i < strings.size(); ++i) {
    if (lengths[i] > in.size()) return bad_size();
    strings[i].assign(in.data(), lengths[i]);
    in.remove_prefix(lengths[i]);
  }
  if (!in.empty()) return bad_size();
  return t;
}

absl::StatusOr<Tensor> BundleReader::Read(absl::string_view name, DataType dtype) const {
  const BundleEntryProto* e = Find(name);
  if (e != nullptr && e->slices().empty() && e->dtype() == dtype) {
    return ReadEntry(*e, absl::StrCat("tensor '", name, "'"));
  }
  TensorShape full;
  if (e != nullptr) DF_RETURN_IF_ERROR(TensorShape::FromProto(e->shape(), &full));  // checked
  return ReadSlice(name, dtype, full, TensorSlice(full.dims()));
}

absl::StatusOr<Tensor> BundleReader::ReadSlice(absl::string_view name, DataType dtype,
                                               const TensorShape& full_shape,
                                               const TensorSlice& slice) const {
  const BundleEntryProto* e = Find(name);
  if (e == nullptr) {
    return errors::NotFound("tensor '", name, "' not found in checkpoint '", prefix_, "'");
  }
  if (e->dtype() != dtype) {
    return errors::InvalidArgument("tensor '", name, "' is ", DataTypeString(e->dtype()),
                                   " in checkpoint '", prefix_, "' but ", DataTypeString(dtype),
                                   " was requested");
  }
  TensorShape full;
  DF_RETURN_IF_ERROR(TensorShape::FromProto(e->shape(), &full));  // checked by the index
  if (full != full_shape) {
    return errors::InvalidArgument("tensor '", name, "' has shape ", full.DebugString(),
                                   " in checkpoint '", prefix_, "' but shape ",
                                   full_shape.DebugString(), " was requested");
  }
  if (absl::Status fits = slice.CheckFits(full); !fits.ok()) {
    return errors::InvalidArgument("reading tensor '", name, "' from checkpoint '", prefix_,
                                   "': ", fits.message());
  }
  const TensorSlice want = slice.Resolve(full);
  if (e->slices().empty()) {
    DF_ASSIGN_OR_RETURN(Tensor whole, ReadEntry(*e, absl::StrCat("tensor '", name, "'")));
    if (slice.Covers(full)) return whole;
    Tensor out(dtype, slice.SliceShape(full));
    CopySliceOverlap(whole, TensorSlice(full.dims()).Resolve(full), want, &out);
    return out;
  }
  Tensor out;
  DF_RETURN_IF_ERROR(errors::Annotate(
      Tensor::Allocate(dtype, slice.SliceShape(full), &out),
      absl::StrCat("reading tensor '", name, "' from checkpoint '", prefix_, "': ")));
  int64_t filled = 0;
  for (const TensorSliceProto& proto : e->slices()) {
    const TensorSlice stored = *TensorSlice::FromProto(proto);  // checked by the index
    const TensorSlice saved = stored.Resolve(full);
    if (OverlapElements(saved, want) == 0) continue;
    const std::string what =
        absl::StrCat("slice ", stored.DebugString(), " of tensor '", name, "'");
    const BundleEntryProto* part = Find(SliceKey(name, stored));
    if (part == nullptr || part->dtype() != dtype || !part->slices().empty()) {
      return errors::DataLoss("checkpoint index ", BundleIndexFilename(prefix_), " lists ", what,
                              " but has no ", DataTypeString(dtype), " entry for it");
    }
    DF_ASSIGN_OR_RETURN(Tensor values, ReadEntry(*part, what));
    if (values.shape() != saved.SliceShape(full)) {
      return errors::DataLoss(what, " in checkpoint '", prefix_, "' has shape ",
                              values.shape().DebugString());
    }
    filled += CopySliceOverlap(values, saved, want, &out);
  }
  if (filled != out.NumElements()) {
    return errors::NotFound("the slices of tensor '", name, "' saved in checkpoint '", prefix_,
                            "' do not cover slice ", want.DebugString());
  }
  return out;
}

absl::Status MergeBundles(absl::Span<const std::string> prefixes, const std::string& merged_prefix,
                          bool allow_missing_files) {
  BundleIndex merged;
  bool first = true;
  // Input data file -> its shard number in the merged checkpoint.
  std::map<std::string, int> shard_of;
  std::vector<std::string> data_files;  // by merged shard number
  std::vector<std::string> merged_inputs;
  for (const std::string& prefix : prefixes) {
    absl::StatusOr<BundleIndex> in = ReadBundleIndex(prefix);
    if (allow_missing_files && absl::IsNotFound(in.status())) continue;
    if (!in.ok()) return in.status();
    if (in->format != BundleIndex::Format::kTensorBundleV2) {
      return errors::InvalidArgument("cannot merge checkpoint '", prefix,
                                     "': it is in the old DFBUNDLE format");
    }
    const BundleHeaderProto& h = in->header;
    if (first) {
      merged.header = h;
      first = false;
    } else if (h.endianness() != merged.header.endianness() ||
               h.version().SerializeAsString() != merged.header.version().SerializeAsString()) {
      return errors::InvalidArgument("cannot merge checkpoint '", prefix,
                                     "': its header's byte order or version differs from the "
                                     "first checkpoint's");
    }
    for (auto& [key, entry] : in->entries) {
      auto existing = merged.entries.find(key);
      if (existing != merged.entries.end()) {
        // Only a tensor saved in slices may appear in several inputs.
        BundleEntryProto& full = existing->second;
        if (full.slices().empty() || entry.slices().empty() || full.dtype() != entry.dtype() ||
            full.shape().SerializeAsString() != entry.shape().SerializeAsString()) {
          return errors::InvalidArgument("cannot merge checkpoint '", prefix, "': tensor '",
                                         PrintableKey(key), "' is in an earlier checkpoint too");
        }
        for (const TensorSliceProto& s : entry.slices()) *full.add_slices() = s;
        continue;
      }
      if (entry.slices().empty()) {
        const std::string file = BundleDataFilename(prefix, entry.shard_id(), h.num_shards());
        auto [it, inserted] = shard_of.try_emplace(file, static_cast<int>(data_files.size()));
        if (inserted) data_files.push_back(file);
        entry.set_shard_id(it->second);
      }
      merged.entries.emplace(key, std::move(entry));
    }
    merged_inputs.push_back(prefix);
  }
  const int n = static_cast<int>(data_files.size());
  merged.header.set_num_shards(n);
  if (first) merged.header.mutable_version()->set_producer(1);
  DF_RETURN_IF_ERROR(CreateParentDir(merged_prefix));
  for (int i = 0; i < n; ++i) {
    const std::string to = BundleDataFilename(merged_prefix, i, n);
    if (data_files[i] == to) continue;
    if (!std::filesystem::exists(data_files[i])) {
      return errors::DataLoss("cannot merge into '", merged_prefix, "': data file ", data_files[i],
                              " is missing");
    }
    DF_RETURN_IF_ERROR(Rename(data_files[i], to));
  }
  DF_RETURN_IF_ERROR(WriteBundleIndex(merged_prefix, merged));
  // The inputs' index files go, and any data file no entry used (an input
  // that saved no tensor still wrote an empty one).
  std::error_code ec;
  for (const std::string& prefix : merged_inputs) {
    if (prefix == merged_prefix) continue;
    std::filesystem::remove(BundleIndexFilename(prefix), ec);
    const std::string unused = BundleDataFilename(prefix, 0, 1);
    if (!shard_of.contains(unused)) std::filesystem::remove(unused, ec);
  }
  return absl::OkStatus();
}

}  // namespace distflow
