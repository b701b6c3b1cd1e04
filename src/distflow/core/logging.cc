#include "distflow/core/logging.h"

#include <cstdio>
#include <cstdlib>

namespace distflow {
namespace internal {

void CheckFailed(const char* file, int line, const char* cond, absl::string_view msg) {
  std::fprintf(stderr, "F %s:%d check failed: %s %.*s\n", file, line, cond,
               static_cast<int>(msg.size()), msg.data());
  std::fflush(stderr);
  std::abort();
}

void LogLine(char severity, absl::string_view msg) {
  std::fprintf(stderr, "%c %.*s\n", severity, static_cast<int>(msg.size()), msg.data());
}

}  // namespace internal
}  // namespace distflow
