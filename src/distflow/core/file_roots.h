// The directories that ops touching files (SaveV2, RestoreV2) may use, for
// a server that must not let a caller write or read anywhere else. Empty —
// the default — allows every path. A path is inside a root when, made
// absolute with symbolic links of its existing part resolved and "." and
// ".." removed, it is the root or lies below it. Thread-safe.
#ifndef DISTFLOW_CORE_FILE_ROOTS_H_
#define DISTFLOW_CORE_FILE_ROOTS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace distflow {

// Replaces the allowed roots. InvalidArgument naming a root that cannot be
// made absolute (e.g. empty).
absl::Status SetAllowedFileRoots(const std::vector<std::string>& roots);
std::vector<std::string> AllowedFileRoots();

// OK when no roots are set or `path` is inside one; PermissionDenied naming
// the path and the roots otherwise.
absl::Status CheckFileAllowed(const std::string& path);

}  // namespace distflow

#endif  // DISTFLOW_CORE_FILE_ROOTS_H_
