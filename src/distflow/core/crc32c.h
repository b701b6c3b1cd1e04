// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected), the checksum
// iSCSI, ext4, LevelDB and TensorFlow's checkpoints use. Table-driven, eight
// bytes at a time. Pure functions: thread-safe.
#ifndef DISTFLOW_CORE_CRC32C_H_
#define DISTFLOW_CORE_CRC32C_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace distflow {
namespace crc32c {

// The CRC-32C of `init_crc`'s data followed by data[0, n).
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

// The CRC-32C of `data`. Value("123456789") == 0xE3069283.
inline uint32_t Value(absl::string_view data) { return Extend(0, data.data(), data.size()); }

// A CRC stored next to the data it covers is masked, as LevelDB and
// TensorFlow store theirs: the CRC of bytes that embed their own CRC is
// then not degenerate. Unmask(Mask(c)) == c.
constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace crc32c
}  // namespace distflow

#endif  // DISTFLOW_CORE_CRC32C_H_
