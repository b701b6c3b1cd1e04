// The system's text for an errno value. For a status, absl::ErrnoToStatus
// picks the code by one rule (a missing file is NotFound, a path through a
// file FailedPrecondition, ...); a transport that reports every failure of
// its peer as Unavailable adds this text to its own message instead.
#ifndef DISTFLOW_CORE_ERRNO_TEXT_H_
#define DISTFLOW_CORE_ERRNO_TEXT_H_

#include <string>

namespace distflow {

// strerror's text for `error`; thread-safe, unlike strerror.
std::string ErrnoText(int error);

}  // namespace distflow

#endif  // DISTFLOW_CORE_ERRNO_TEXT_H_
