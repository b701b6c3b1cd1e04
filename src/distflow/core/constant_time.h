// Comparing secrets (cluster tokens) without stopping at the first
// difference, so that the time a comparison takes tells nothing of how much
// of a guess was right. Pure function: thread-safe.
#ifndef DISTFLOW_CORE_CONSTANT_TIME_H_
#define DISTFLOW_CORE_CONSTANT_TIME_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace distflow {

// True iff `given` equals `secret`. The time depends on the lengths only.
inline bool ConstantTimeEquals(absl::string_view given, absl::string_view secret) {
  if (given.size() != secret.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < secret.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ secret[i]);
  }
  return diff == 0;
}

}  // namespace distflow

#endif  // DISTFLOW_CORE_CONSTANT_TIME_H_
