// TensorBoard event file bytes -> records -> Events (records over 1 MiB are
// refused by the parser, which bounds memory). Half of the inputs get
// their checksums repaired (first byte odd) so that they reach the record
// lengths and the Event parser instead of stopping at the first checksum.
#include <cstdint>
#include <string>
#include <vector>

#include "distflow/core/crc32c.h"
#include "distflow/event.pb.h"
#include "distflow/monitoring/record_io.h"

namespace {

void PutU32(std::string* s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}

uint64_t GetU64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

// Rewrites each record's two checksums to match its bytes, as far as the
// framing goes.
void RepairChecksums(std::string* s) {
  size_t at = 0;
  while (at + 12 <= s->size()) {
    PutU32(s, at + 8, distflow::crc32c::Mask(distflow::crc32c::Extend(0, s->data() + at, 8)));
    const uint64_t length = GetU64(*s, at);
    if (length > s->size() - at - 12 || s->size() - at - 12 - length < 4) return;
    const size_t data = at + 12;
    PutU32(s, data + length,
           distflow::crc32c::Mask(distflow::crc32c::Extend(0, s->data() + data, length)));
    at = data + length + 4;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) RepairChecksums(&bytes);
  auto records = distflow::ParseRecords(bytes, "fuzz", /*max_record_bytes=*/1 << 20);
  if (!records.ok()) return 0;
  for (const std::string& r : *records) {
    distflow::Event e;
    if (e.ParseFromString(r)) e.SerializeAsString();
  }
  return 0;
}
