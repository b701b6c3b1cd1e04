// Checkpoint files -> tensors. The input is a u32 (little-endian) length L,
// L bytes of index file without its trailing checksum, and the data file.
// The harness fills in the index's checksum and the data file's checksum
// (index bytes 24..27) so that inputs reach the entry parser and the tensor
// decoder instead of stopping at the checksums; every entry is then read.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "distflow/core/crc32c.h"
#include "distflow/framework/tensor_bundle.h"
#include "fuzz_limits.h"

namespace {

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

void PutU32(std::string* s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::SetFuzzLimits();
  if (size < 4) return 0;
  uint32_t index_len;
  std::memcpy(&index_len, data, 4);
  if (index_len > size - 4) return 0;
  const char* bytes = reinterpret_cast<const char*>(data) + 4;
  std::string index(bytes, index_len);
  const std::string payload(bytes + index_len, size - 4 - index_len);
  constexpr size_t kDataCrcAt = 24;
  if (index.size() >= kDataCrcAt + 4) PutU32(&index, kDataCrcAt, crc32c::Value(payload));
  const uint32_t crc = crc32c::Value(index);
  index.append(reinterpret_cast<const char*>(&crc), 4);

  const std::string prefix = fuzz::ScratchDir() + "/ckpt";
  WriteFile(BundleIndexFilename(prefix), index);
  WriteFile(BundleDataFilename(prefix), payload);
  absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix);
  if (!reader.ok()) return 0;
  for (const std::string& name : (*reader)->Names()) {
    const BundleReader::Entry* e = (*reader)->Find(name);
    (*reader)->Read(name, e->dtype).IgnoreError();
  }
  return 0;
}
