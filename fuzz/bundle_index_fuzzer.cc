// A checkpoint's .index file -> its entries. The input is the file's bytes:
// a LevelDB-format table (TensorFlow's tensor bundle V2) or a DFBUNDLE
// index, whose trailing checksum the harness fills in so that inputs reach
// the entry parser. An index that parses must survive being written and
// parsed again unchanged.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "distflow/core/crc32c.h"
#include "distflow/framework/bundle_index.h"
#include "fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::SetFuzzLimits();
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.rfind("DFBUNDLE", 0) == 0 && bytes.size() >= 4) {
    const uint32_t crc = crc32c::Value(absl::string_view(bytes.data(), bytes.size() - 4));
    for (int i = 0; i < 4; ++i) bytes[bytes.size() - 4 + i] = static_cast<char>(crc >> (8 * i));
  }
  absl::StatusOr<BundleIndex> index = ParseBundleIndex("fuzz.index", bytes);
  if (!index.ok() || index->format != BundleIndex::Format::kTensorBundleV2) return 0;
  const std::string written = SerializeBundleIndex(*index);
  absl::StatusOr<BundleIndex> again = ParseBundleIndex("fuzz.index", written);
  if (!again.ok() || SerializeBundleIndex(*again) != written) std::abort();
  return 0;
}
