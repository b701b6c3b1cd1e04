// Variable-length integers as protobuf, LevelDB and TensorFlow write them:
// seven bits per byte, least significant first, the high bit set on every
// byte but the last. Pure functions; thread-safe.
#ifndef DISTFLOW_CORE_VARINT_H_
#define DISTFLOW_CORE_VARINT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace distflow {

inline void PutVarint64(std::string* out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) out->push_back(static_cast<char>(v | 0x80));
  out->push_back(static_cast<char>(v));
}

// Reads one varint from the front of `in` and drops its bytes. False, with
// `in` unspecified, when `in` ends inside it or it is longer than 10 bytes.
inline bool GetVarint64(absl::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

}  // namespace distflow

#endif  // DISTFLOW_CORE_VARINT_H_
