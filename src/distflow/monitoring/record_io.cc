#include "distflow/monitoring/record_io.h"

#include "absl/strings/str_cat.h"
#include "distflow/core/crc32c.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

constexpr size_t kLengthBytes = 8;
constexpr size_t kCrcBytes = 4;
constexpr size_t kHeaderBytes = kLengthBytes + kCrcBytes;

// Little-endian fixed-width integers, byte by byte (any host order).
template <typename T>
void StoreLittle(T v, char* out) {
  for (size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
template <typename T>
T LoadLittle(const char* in) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<T>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

void AppendFixed32(uint32_t v, std::string* out) {
  char buf[kCrcBytes];
  StoreLittle<uint32_t>(v, buf);
  out->append(buf, sizeof(buf));
}

}  // namespace

void AppendRecord(absl::string_view data, std::string* out) {
  char length[kLengthBytes];
  StoreLittle<uint64_t>(data.size(), length);
  out->append(length, sizeof(length));
  AppendFixed32(crc32c::Mask(crc32c::Extend(0, length, sizeof(length))), out);
  out->append(data.data(), data.size());
  AppendFixed32(crc32c::Mask(crc32c::Value(data)), out);
}

absl::StatusOr<std::vector<std::string>> ParseRecords(absl::string_view contents,
                                                      absl::string_view source,
                                                      uint64_t max_record_bytes) {
  std::vector<std::string> records;
  size_t offset = 0;
  while (offset < contents.size()) {
    const absl::string_view rest = contents.substr(offset);
    auto where = [&] { return absl::StrCat(source, ": record at byte ", offset); };
    if (rest.size() < kHeaderBytes) {
      return errors::DataLoss(where(), " is cut short (", rest.size(), " bytes of its ",
                              kHeaderBytes, "-byte header)");
    }
    const uint64_t length = LoadLittle<uint64_t>(rest.data());
    const uint32_t length_crc = LoadLittle<uint32_t>(rest.data() + kLengthBytes);
    if (crc32c::Unmask(length_crc) != crc32c::Extend(0, rest.data(), kLengthBytes)) {
      return errors::DataLoss(where(), " has a corrupt length (its checksum does not match)");
    }
    if (length > max_record_bytes) {
      return errors::DataLoss(where(), " claims ", length, " bytes, over the limit of ",
                              max_record_bytes);
    }
    // length <= max_record_bytes, so the sum cannot overflow.
    if (rest.size() - kHeaderBytes < length + kCrcBytes) {
      return errors::DataLoss(where(), " is cut short: it claims ", length,
                              " bytes of data but the file has ", rest.size() - kHeaderBytes,
                              " bytes left");
    }
    const absl::string_view data = rest.substr(kHeaderBytes, length);
    const uint32_t data_crc = LoadLittle<uint32_t>(rest.data() + kHeaderBytes + length);
    if (crc32c::Unmask(data_crc) != crc32c::Value(data)) {
      return errors::DataLoss(where(), " has corrupt data (its checksum does not match)");
    }
    records.emplace_back(data);
    offset += kHeaderBytes + length + kCrcBytes;
  }
  return records;
}

}  // namespace distflow
