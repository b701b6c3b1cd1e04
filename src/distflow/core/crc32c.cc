#include "distflow/core/crc32c.h"

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace distflow {
namespace crc32c {
namespace {

static_assert(std::endian::native == std::endian::little, "the 8-byte loop loads little-endian");

// The reversed Castagnoli polynomial.
constexpr uint32_t kPolynomial = 0x82F63B78u;

// kTables[0] advances the CRC over one byte; kTables[k] over one byte
// followed by k zero bytes, so eight lookups advance it over eight bytes.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1) ? (crc >> 1) ^ kPolynomial : crc >> 1;
    }
    t[0][i] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t i = 0; i < 256; ++i) {
      t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xffu];
    }
  }
  return t;
}

constexpr Tables kTables = MakeTables();

uint32_t ExtendPortable(uint32_t crc, const unsigned char* p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;
    crc = kTables[7][lo & 0xffu] ^ kTables[6][(lo >> 8) & 0xffu] ^ kTables[5][(lo >> 16) & 0xffu] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xffu] ^ kTables[2][(hi >> 8) & 0xffu] ^
          kTables[1][(hi >> 16) & 0xffu] ^ kTables[0][hi >> 24];
  }
  for (; n > 0; ++p, --n) crc = kTables[0][(crc ^ *p) & 0xffu] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
// SSE4.2's crc32 instruction computes exactly this CRC, 8 bytes at a time.
__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t crc, const unsigned char* p,
                                                       size_t n) {
  uint64_t c = crc;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  crc = static_cast<uint32_t>(c);
  for (; n > 0; ++p, --n) crc = _mm_crc32_u8(crc, *p);
  return crc;
}

bool HaveSse42() {
  static const bool have = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0;
  }();
  return have;
}
#endif

}  // namespace

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  if (HaveSse42()) return ~ExtendSse42(~init_crc, p, n);
#endif
  return ~ExtendPortable(~init_crc, p, n);
}

}  // namespace crc32c
}  // namespace distflow
