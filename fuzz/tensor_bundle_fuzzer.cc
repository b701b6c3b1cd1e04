// Checkpoint entries -> tensors. The input is a u32 (little-endian) length
// L, L bytes of a serialized BundleEntryProto, and the data file. The
// harness writes an index holding that entry as tensor "t" (in shard 0 of
// 1) with the CRC of the bytes it names filled in, so that inputs reach the
// tensor decoders (numbers, bools, TensorFlow's string layout, slices)
// instead of stopping at the checksum; then reads "t" whole.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "distflow/core/crc32c.h"
#include "distflow/framework/tensor_bundle.h"
#include "fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::SetFuzzLimits();
  if (size < 4) return 0;
  uint32_t entry_len;
  std::memcpy(&entry_len, data, 4);
  if (entry_len > size - 4) return 0;
  const char* bytes = reinterpret_cast<const char*>(data) + 4;
  BundleEntryProto entry;
  if (!entry.ParseFromArray(bytes, static_cast<int>(entry_len))) return 0;
  const std::string payload(bytes + entry_len, size - 4 - entry_len);
  entry.set_shard_id(0);
  const uint64_t offset = static_cast<uint64_t>(entry.offset());
  const uint64_t n = static_cast<uint64_t>(entry.size());
  if (offset <= payload.size() && n <= payload.size() - offset) {
    entry.set_crc32c(crc32c::Mask(crc32c::Value(absl::string_view(payload).substr(offset, n))));
  }
  BundleIndex index;
  index.header.set_num_shards(1);
  index.entries["t"] = entry;

  const std::string prefix = fuzz::ScratchDir() + "/ckpt";
  if (!WriteBundleIndex(prefix, index).ok()) return 0;
  std::ofstream(BundleDataFilename(prefix), std::ios::binary | std::ios::trunc) << payload;
  absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix);
  if (!reader.ok()) return 0;
  (*reader)->Read("t", entry.dtype()).IgnoreError();
  return 0;
}
