// Internal invariant checks. DF_CHECK is for conditions that only a bug in
// distflow can violate; bad user input is reported through absl::Status.
#ifndef DISTFLOW_CORE_LOGGING_H_
#define DISTFLOW_CORE_LOGGING_H_

#include "absl/strings/string_view.h"

namespace distflow {
namespace internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, absl::string_view msg);
// Writes one line to stderr, prefixed with the severity letter.
void LogLine(char severity, absl::string_view msg);
}  // namespace internal
}  // namespace distflow

#define DF_CHECK(cond)                                                             \
  do {                                                                             \
    if (!(cond)) ::distflow::internal::CheckFailed(__FILE__, __LINE__, #cond, ""); \
  } while (0)
#define DF_CHECK_MSG(cond, msg)                                                     \
  do {                                                                              \
    if (!(cond)) ::distflow::internal::CheckFailed(__FILE__, __LINE__, #cond, msg); \
  } while (0)

#ifdef NDEBUG
#define DF_DCHECK(cond) \
  do {                  \
  } while (false && (cond))
#else
#define DF_DCHECK(cond) DF_CHECK(cond)
#endif

#endif  // DISTFLOW_CORE_LOGGING_H_
