// Which versions of a model there are under its base path, and which of
// them its version policy wants served. A version is a subdirectory whose
// name is all digits ("1", "00000123"), its number the version; other
// entries are ignored. Pure functions over the file system; thread-safe.
#ifndef DISTFLOW_SERVING_ASPIRED_VERSIONS_H_
#define DISTFLOW_SERVING_ASPIRED_VERSIONS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "distflow/model_server_config.pb.h"

namespace distflow {

// Version -> directory. NotFound naming the path when it is not a
// directory; an empty map when it holds no version.
absl::StatusOr<std::map<int64_t, std::string>> ListVersionDirs(const std::string& base_path);

// The versions of `available` that `policy` asks for: the newest
// latest.num_versions (default, 1 when 0), all, or the specific ones that
// are there.
std::set<int64_t> AspiredVersions(const ServableVersionPolicy& policy,
                                  const std::map<int64_t, std::string>& available);

}  // namespace distflow

#endif  // DISTFLOW_SERVING_ASPIRED_VERSIONS_H_
