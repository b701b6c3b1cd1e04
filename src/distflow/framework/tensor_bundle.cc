#include "distflow/framework/tensor_bundle.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/crc32c.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/framework/tensor_proto.h"

namespace distflow {
namespace {

static_assert(std::endian::native == std::endian::little,
              "checkpoint payloads are the host's little-endian bytes");

constexpr char kMagic[] = "DFBUNDLE";  // 8 bytes, no terminator written
constexpr size_t kMagicSize = 8;
constexpr uint32_t kVersion = 1;
constexpr int kMaxRank = 254;

void PutU32(std::string* out, uint32_t v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}
void PutU64(std::string* out, uint64_t v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

// Reads fixed-size fields from the front of a byte range; any read past the
// end sets the reader to failed.
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

bool CheckpointableType(DataType dtype) {
  return !IsRefType(dtype) && dtype != DT_RESOURCE && DataTypeIsSupported(dtype);
}

// Appends the payload of `t` to `out`.
void EncodeTensor(const Tensor& t, std::string* out) {
  if (t.dtype() == DT_STRING) {
    for (const std::string& s : t.flat<std::string>()) {
      PutU64(out, s.size());
      out->append(s);
    }
    return;
  }
  if (t.NumElements() > 0) {
    out->append(static_cast<const char*>(t.raw_data()),
                static_cast<size_t>(t.NumElements()) * DataTypeSize(t.dtype()));
  }
}

}  // namespace

std::string BundleDataFilename(absl::string_view prefix) {
  return absl::StrCat(prefix, ".data-00000-of-00001");
}

std::string BundleIndexFilename(absl::string_view prefix) { return absl::StrCat(prefix, ".index"); }

absl::Status ParseShapeAndSlice(absl::string_view spec, TensorShape* shape) {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ' ', absl::SkipEmpty());
  if (parts.size() < 2) {
    return errors::InvalidArgument(
        "shape_and_slice '", spec,
        "' must be 'dim0 dim1 ... slice' (one size per dim, then the slice)");
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int64_t d;
    if (!absl::SimpleAtoi(parts[i], &d) || d < 0) {
      return errors::InvalidArgument("shape_and_slice '", spec, "' has a bad size '", parts[i],
                                     "'");
    }
    dims.push_back(d);
  }
  std::vector<absl::string_view> slices = absl::StrSplit(parts.back(), ':');
  if (slices.size() != dims.size()) {
    return errors::InvalidArgument("shape_and_slice '", spec, "' has ", dims.size(), " sizes but ",
                                   slices.size(), " slice dims");
  }
  for (size_t i = 0; i < slices.size(); ++i) {
    if (slices[i] == "-") continue;
    std::vector<absl::string_view> se = absl::StrSplit(slices[i], ',');
    int64_t start, length;
    if (se.size() != 2 || !absl::SimpleAtoi(se[0], &start) || !absl::SimpleAtoi(se[1], &length)) {
      return errors::InvalidArgument("shape_and_slice '", spec, "' has a bad slice '", slices[i],
                                     "'");
    }
    if (start != 0 || (length != dims[i] && length != -1)) {
      return errors::Unimplemented("shape_and_slice '", spec,
                                   "' asks for part of a tensor; only whole "
                                   "tensors can be saved and restored");
    }
  }
  return TensorShape::BuildTensorShape(dims, shape);
}

BundleWriter::BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {}

absl::Status BundleWriter::Add(absl::string_view name, const Tensor& tensor) {
  if (name.empty()) {
    return errors::InvalidArgument("checkpoint tensor names must not be empty");
  }
  if (!CheckpointableType(tensor.dtype()) || !tensor.IsInitialized()) {
    return errors::InvalidArgument("tensor '", name, "' of type ", DataTypeString(tensor.dtype()),
                                   " cannot be saved in a checkpoint");
  }
  const uint64_t offset = data_.size();
  EncodeTensor(tensor, &data_);
  const uint64_t size = data_.size() - offset;
  Pending p{tensor.dtype(), tensor.shape(), offset, size,
            crc32c::Extend(0, data_.data() + offset, size)};
  if (!entries_.emplace(std::string(name), std::move(p)).second) {
    data_.resize(offset);
    return errors::InvalidArgument("tensor '", name, "' is saved twice in one checkpoint");
  }
  return absl::OkStatus();
}

absl::Status BundleWriter::Finish() {
  std::string index(kMagic, kMagicSize);
  PutU32(&index, kVersion);
  PutU32(&index, static_cast<uint32_t>(entries_.size()));
  PutU64(&index, data_.size());
  PutU32(&index, crc32c::Value(data_));
  for (const auto& [name, e] : entries_) {
    PutU32(&index, static_cast<uint32_t>(name.size()));
    index.append(name);
    PutU32(&index, static_cast<uint32_t>(e.dtype));
    PutU32(&index, static_cast<uint32_t>(e.shape.dims()));
    for (int64_t d : e.shape.dim_sizes()) PutU64(&index, static_cast<uint64_t>(d));
    PutU64(&index, e.offset);
    PutU64(&index, e.size);
    PutU32(&index, e.crc);
  }
  PutU32(&index, crc32c::Value(index));

  const std::filesystem::path dir =
      std::filesystem::path(BundleIndexFilename(prefix_)).parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return errors::Unavailable("cannot create checkpoint directory ", dir.string(), ": ",
                                 ec.message());
    }
  }
  DF_RETURN_IF_ERROR(WriteStringToFileAtomic(BundleDataFilename(prefix_), data_));
  return WriteStringToFileAtomic(BundleIndexFilename(prefix_), index);
}

absl::StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(const std::string& prefix) {
  const std::string index_file = BundleIndexFilename(prefix);
  absl::StatusOr<std::string> index = ReadFileToString(index_file);
  if (absl::IsNotFound(index.status())) {
    return errors::NotFound("no checkpoint at '", prefix, "': ", index_file, " does not exist");
  }
  if (!index.ok()) return index.status();
  std::unique_ptr<BundleReader> reader(new BundleReader(prefix));
  uint64_t data_size = 0;
  uint32_t data_crc = 0;
  DF_RETURN_IF_ERROR(reader->ParseIndex(index_file, *index, &data_size, &data_crc));

  const std::string data_file = BundleDataFilename(prefix);
  absl::StatusOr<std::string> data = ReadFileToString(data_file);
  if (absl::IsNotFound(data.status())) {
    return errors::DataLoss("checkpoint '", prefix, "' has an index but its data file ", data_file,
                            " is missing");
  }
  if (!data.ok()) return data.status();
  reader->data_ = *std::move(data);
  DF_RETURN_IF_ERROR(reader->CheckData(data_size, data_crc));
  return reader;
}

absl::Status BundleReader::ParseIndex(const std::string& index_file, absl::string_view index,
                                      uint64_t* data_size, uint32_t* data_crc) {
  constexpr size_t kHeader = kMagicSize + 4 + 4 + 8 + 4;
  if (index.size() < kHeader + 4) {
    return errors::DataLoss("checkpoint index ", index_file, " is truncated (", index.size(),
                            " bytes)");
  }
  if (index.substr(0, kMagicSize) != absl::string_view(kMagic, kMagicSize)) {
    return errors::DataLoss("checkpoint index ", index_file, " is not a distflow checkpoint index");
  }
  const absl::string_view body = index.substr(0, index.size() - 4);
  uint32_t stored_crc;
  std::memcpy(&stored_crc, index.data() + body.size(), 4);
  if (crc32c::Value(body) != stored_crc) {
    return errors::DataLoss("checkpoint index ", index_file,
                            " is corrupted or truncated (checksum mismatch)");
  }
  Cursor in(body.substr(kMagicSize));
  const uint32_t version = in.Get<uint32_t>();
  if (version != kVersion) {
    return errors::DataLoss("checkpoint index ", index_file, " has version ", version,
                            "; this build reads version ", kVersion);
  }
  const uint32_t n = in.Get<uint32_t>();
  *data_size = in.Get<uint64_t>();
  *data_crc = in.Get<uint32_t>();
  for (uint32_t i = 0; i < n && in.ok(); ++i) {
    const uint32_t name_len = in.Get<uint32_t>();
    const std::string name(in.GetBytes(name_len));
    Entry e;
    e.dtype = static_cast<DataType>(in.Get<uint32_t>());
    const uint32_t rank = in.Get<uint32_t>();
    if (!in.ok()) break;
    if (rank > kMaxRank || !CheckpointableType(e.dtype)) {
      return errors::DataLoss("checkpoint index ", index_file, " entry '", name,
                              "' has a bad dtype or rank");
    }
    std::vector<int64_t> dims(rank);
    for (int64_t& d : dims) d = static_cast<int64_t>(in.Get<uint64_t>());
    e.offset = in.Get<uint64_t>();
    e.size = in.Get<uint64_t>();
    e.crc = in.Get<uint32_t>();
    if (!in.ok()) break;
    if (!TensorShape::BuildTensorShape(dims, &e.shape).ok() || e.offset > *data_size ||
        e.size > *data_size - e.offset) {
      return errors::DataLoss("checkpoint index ", index_file, " entry '", name,
                              "' has a bad shape or byte range");
    }
    if (!entries_.emplace(name, std::move(e)).second) {
      return errors::DataLoss("checkpoint index ", index_file, " lists '", name, "' twice");
    }
  }
  if (!in.ok() || !in.empty()) {
    return errors::DataLoss("checkpoint index ", index_file, " is malformed");
  }
  return absl::OkStatus();
}

absl::Status BundleReader::CheckData(uint64_t data_size, uint32_t data_crc) const {
  const std::string data_file = BundleDataFilename(prefix_);
  std::vector<std::pair<const std::string*, const Entry*>> by_offset;
  for (const auto& [name, e] : entries_) by_offset.emplace_back(&name, &e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto& a, const auto& b) { return a.second->offset < b.second->offset; });
  if (data_.size() < data_size) {
    std::string victim;
    for (const auto& [name, e] : by_offset) {
      if (e->offset + e->size > data_.size()) {
        victim = absl::StrCat(": tensor '", *name, "' is cut off");
        break;
      }
    }
    return errors::DataLoss("checkpoint data file ", data_file, " is truncated (", data_.size(),
                            " of ", data_size, " bytes)", victim);
  }
  if (data_.size() > data_size) {
    return errors::DataLoss("checkpoint data file ", data_file, " has ", data_.size(),
                            " bytes but its index expects ", data_size);
  }
  if (crc32c::Value(data_) == data_crc) return absl::OkStatus();
  for (const auto& [name, e] : by_offset) {
    if (crc32c::Extend(0, data_.data() + e->offset, e->size) != e->crc) {
      return errors::DataLoss("checksum mismatch for tensor '", *name, "' in ", data_file,
                              ": the checkpoint is corrupted");
    }
  }
  return errors::DataLoss("checksum mismatch in checkpoint data file ", data_file,
                          ": it does not belong to its index or is corrupted");
}

const BundleReader::Entry* BundleReader::Find(absl::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> BundleReader::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, e] : entries_) names.push_back(name);
  return names;
}

absl::StatusOr<Tensor> BundleReader::Read(absl::string_view name, DataType dtype) const {
  const Entry* e = Find(name);
  if (e == nullptr) {
    return errors::NotFound("tensor '", name, "' not found in checkpoint '", prefix_, "'");
  }
  if (e->dtype != dtype) {
    return errors::InvalidArgument("tensor '", name, "' is ", DataTypeString(e->dtype),
                                   " in checkpoint '", prefix_, "' but ", DataTypeString(dtype),
                                   " was requested");
  }
  const absl::string_view bytes(data_.data() + e->offset, e->size);
  if (crc32c::Value(bytes) != e->crc) {
    return errors::DataLoss("checksum mismatch for tensor '", name, "' in checkpoint '", prefix_,
                            "'");
  }
  auto bad_size = [&] {
    return errors::DataLoss("tensor '", name, "' in checkpoint '", prefix_, "' has ", e->size,
                            " bytes, which do not hold a ", DataTypeString(dtype),
                            " tensor of shape ", e->shape.DebugString());
  };
  // The shape comes from the file: check it against the entry's byte count
  // before allocating, so a claimed shape of [2^62] is an error, not a huge
  // (or, with wrapped arithmetic, tiny) buffer.
  const int64_t n = e->shape.num_elements();
  if (dtype == DT_STRING) {
    // Every string carries at least its 8-byte length.
    if (static_cast<uint64_t>(n) > e->size / sizeof(uint64_t)) return bad_size();
  } else {
    int64_t want;
    if (!MultiplyWithoutOverflow<int64_t>(n, DataTypeSize(dtype), &want) ||
        static_cast<uint64_t>(want) != e->size) {
      return bad_size();
    }
  }
  Tensor t;
  DF_RETURN_IF_ERROR(errors::Annotate(
      Tensor::Allocate(dtype, e->shape, &t),
      absl::StrCat("reading tensor '", name, "' from checkpoint '", prefix_, "': ")));
  if (dtype == DT_STRING) {
    Cursor in(bytes);
    for (std::string& s : t.flat<std::string>()) {
      const uint64_t len = in.Get<uint64_t>();
      s = std::string(in.GetBytes(len));
    }
    if (!in.ok() || !in.empty()) return bad_size();
    return t;
  }
  CopyRawBytesToTensor(bytes.data(), &t);
  return t;
}

}  // namespace distflow
