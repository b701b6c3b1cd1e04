#include "distflow/core/env.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "distflow/core/random.h"
#include "distflow/core/status.h"

namespace distflow {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {
absl::Status IoError(const std::string& what, const std::string& path) {
  const int err = errno;
  if (err == ENOENT) return errors::NotFound(what, " '", path, "': ", std::strerror(err));
  return errors::Internal(what, " '", path, "': ", std::strerror(err));
}
}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return IoError("cannot open", path);
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return errors::Internal("error reading '", path, "'");
  return out;
}

absl::Status WriteStringToFileAtomic(const std::string& path, absl::string_view data) {
  const std::string tmp = absl::StrCat(path, ".tmp", random::New64() & 0xffffffff);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return IoError("cannot create", tmp);
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t w = ::write(fd, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      absl::Status s = IoError("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    off += static_cast<size_t>(w);
  }
  const bool sync_failed = ::fsync(fd) != 0;
  if (::close(fd) != 0 || sync_failed) {
    absl::Status s = IoError("cannot flush", tmp);
    ::unlink(tmp.c_str());
    return s;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    absl::Status s = IoError("cannot rename onto", path);
    ::unlink(tmp.c_str());
    return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::ErrnoToStatus(errno, "getrlimit(RLIMIT_NOFILE)");
  }
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      return absl::ErrnoToStatus(errno, "setrlimit(RLIMIT_NOFILE)");
    }
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return static_cast<uint64_t>(before);
  }
  return static_cast<uint64_t>(limit.rlim_cur);
}

}  // namespace distflow
