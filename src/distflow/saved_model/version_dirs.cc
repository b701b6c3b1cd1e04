#include "distflow/saved_model/version_dirs.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/saved_model/session_bundle.h"

namespace distflow {
namespace {

bool IsRegularFile(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

// The version a directory name spells, or -1.
int64_t VersionOf(const std::string& name) {
  if (name.empty() || !std::all_of(name.begin(), name.end(), absl::ascii_isdigit)) return -1;
  int64_t v = -1;
  return absl::SimpleAtoi(name, &v) ? v : -1;
}

}  // namespace

bool HasSavedModelProto(const std::string& dir) {
  return IsRegularFile(std::filesystem::path(dir) / "saved_model.pb") ||
         IsRegularFile(std::filesystem::path(dir) / "saved_model.pbtxt");
}

bool IsSavedModelDir(const std::string& dir) {
  return HasSavedModelProto(dir) || IsSessionBundleDir(dir);
}

absl::StatusOr<std::vector<SavedModelVersion>> ListSavedModelVersions(const std::string& base) {
  std::error_code ec;
  std::filesystem::directory_iterator it(base, ec);
  if (ec) return errors::NotFound("cannot list model directory '", base, "': ", ec.message());
  std::vector<std::string> names;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return errors::NotFound("cannot list model directory '", base, "': ", ec.message());
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::vector<SavedModelVersion> versions;
  for (const std::string& name : names) {
    const int64_t v = VersionOf(name);
    const std::string dir = (std::filesystem::path(base) / name).string();
    if (v < 0 || !IsSavedModelDir(dir)) continue;
    versions.push_back({v, dir});
  }
  std::stable_sort(
      versions.begin(), versions.end(),
      [](const SavedModelVersion& a, const SavedModelVersion& b) { return a.version < b.version; });
  versions.erase(std::unique(versions.begin(), versions.end(),
                             [](const SavedModelVersion& a, const SavedModelVersion& b) {
                               return a.version == b.version;
                             }),
                 versions.end());
  return versions;
}

absl::StatusOr<std::string> ResolveSavedModelDir(const std::string& path) {
  if (IsSavedModelDir(path)) return path;
  auto versions = ListSavedModelVersions(path);
  if (versions.ok() && !versions->empty()) return versions->back().dir;
  return errors::NotFound("no SavedModel in '", path,
                          "': it has neither saved_model.pb nor saved_model.pbtxt (nor a "
                          "session bundle's export.meta), nor numbered version directories "
                          "holding one");
}

}  // namespace distflow
