#include "distflow/serving/aspired_versions.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "distflow/core/status.h"

namespace distflow {

absl::StatusOr<std::map<int64_t, std::string>> ListVersionDirs(const std::string& base_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(base_path, ec)) {
    return errors::NotFound("model base path ", base_path, " is not a directory");
  }
  std::map<int64_t, std::string> versions;
  for (fs::directory_iterator it(base_path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.size() > 18) continue;  // fits int64 without overflow
    bool digits = true;
    for (char c : name) digits = digits && absl::ascii_isdigit(static_cast<unsigned char>(c));
    int64_t version;
    std::error_code dir_ec;
    if (digits && absl::SimpleAtoi(name, &version) && it->is_directory(dir_ec)) {
      versions[version] = it->path().string();
    }
  }
  if (ec) return errors::Unavailable("cannot list model base path ", base_path, ": ", ec.message());
  return versions;
}

std::set<int64_t> AspiredVersions(const ServableVersionPolicy& policy,
                                  const std::map<int64_t, std::string>& available) {
  std::set<int64_t> aspired;
  switch (policy.policy_choice_case()) {
    case ServableVersionPolicy::kAll:
      for (const auto& [version, dir] : available) aspired.insert(version);
      break;
    case ServableVersionPolicy::kSpecific:
      for (int64_t v : policy.specific().versions()) {
        if (available.contains(v)) aspired.insert(v);
      }
      break;
    case ServableVersionPolicy::kLatest:
    case ServableVersionPolicy::POLICY_CHOICE_NOT_SET: {
      uint32_t n = policy.has_latest() ? policy.latest().num_versions() : 1;
      if (n == 0) n = 1;
      for (auto it = available.rbegin(); it != available.rend() && n > 0; ++it, --n) {
        aspired.insert(it->first);
      }
      break;
    }
  }
  return aspired;
}

}  // namespace distflow
