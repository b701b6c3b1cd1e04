// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected), the checksum
// iSCSI, ext4 and TensorFlow's checkpoints use. Table-driven, one byte at a
// time. Pure functions: thread-safe.
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

}  // namespace crc32c
}  // namespace distflow

#endif  // DISTFLOW_CORE_CRC32C_H_
