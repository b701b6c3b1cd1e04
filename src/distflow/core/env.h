// Clocks, whole-file I/O and the process's file limit. All functions are
// thread-safe.
#ifndef DISTFLOW_CORE_ENV_H_
#define DISTFLOW_CORE_ENV_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace distflow {

// Wall-clock time since the Unix epoch.
int64_t NowMicros();
int64_t NowNanos();

// The whole content of `path`; NotFound when it does not exist.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `data` to a temporary file beside `path` and renames it over `path`,
// so readers see either the old or the new content, never a torn file.
absl::Status WriteStringToFileAtomic(const std::string& path, absl::string_view data);

// Raises the process's soft limit on open files to its hard limit (the usual
// soft limit, 1024, is a few hundred connections of a busy server, and a
// listener that hits it may stop accepting for good). Returns the soft limit
// now in force.
absl::StatusOr<uint64_t> RaiseOpenFileLimit();

}  // namespace distflow

#endif  // DISTFLOW_CORE_ENV_H_
