#include "distflow/core/file_roots.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

absl::Mutex roots_mu;
std::vector<std::string>* roots ABSL_GUARDED_BY(roots_mu) = nullptr;

// `path` absolute, symlinks of its existing part resolved, normalised.
bool Resolve(const std::string& path, std::string* out) {
  if (path.empty()) return false;
  std::error_code ec;
  std::filesystem::path p =
      std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) return false;
  *out = p.lexically_normal().string();
  while (out->size() > 1 && out->back() == '/') out->pop_back();
  return true;
}

}  // namespace

absl::Status SetAllowedFileRoots(const std::vector<std::string>& new_roots) {
  auto resolved = std::make_unique<std::vector<std::string>>();
  for (const std::string& root : new_roots) {
    std::string r;
    if (!Resolve(root, &r)) {
      return errors::InvalidArgument("file root '", root, "' is not a usable directory path");
    }
    resolved->push_back(std::move(r));
  }
  absl::MutexLock lock(&roots_mu);
  delete roots;
  roots = resolved->empty() ? nullptr : resolved.release();
  return absl::OkStatus();
}

std::vector<std::string> AllowedFileRoots() {
  absl::MutexLock lock(&roots_mu);
  return roots == nullptr ? std::vector<std::string>() : *roots;
}

absl::Status CheckFileAllowed(const std::string& path) {
  const std::vector<std::string> allowed = AllowedFileRoots();
  if (allowed.empty()) return absl::OkStatus();
  std::string resolved;
  if (Resolve(path, &resolved)) {
    for (const std::string& root : allowed) {
      if (resolved == root || root == "/" || absl::StartsWith(resolved, root + "/")) {
        return absl::OkStatus();
      }
    }
  }
  return absl::PermissionDeniedError(
      absl::StrCat("path '", path, "' is outside the directories this server allows (",
                   absl::StrJoin(allowed, ", "), ")"));
}

}  // namespace distflow
