#include "distflow/core/env.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
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
// errno's status (absl::ErrnoToStatus: a missing file is NotFound, a path
// through a file FailedPrecondition, no permission PermissionDenied, ...),
// naming what failed and the path.
absl::Status IoError(const std::string& what, const std::string& path) {
  return absl::ErrnoToStatus(errno, absl::StrCat(what, " '", path, "'"));
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
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> file = AtomicFileWriter::Create(path);
  if (!file.ok()) return file.status();
  DF_RETURN_IF_ERROR((*file)->Append(data));
  return (*file)->Commit();
}

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(
    const std::string& path) {
  std::string tmp = absl::StrCat(path, ".tmp", random::New64() & 0xffffffff);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create", tmp);
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, std::move(tmp), fd));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

absl::Status AtomicFileWriter::Append(absl::string_view data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t w = ::write(fd_, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", tmp_);
    }
    off += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  const bool sync_failed = ::fsync(fd_) != 0;
  const bool close_failed = ::close(fd_) != 0;
  fd_ = -1;
  if (sync_failed || close_failed) {
    absl::Status s = IoError("cannot flush", tmp_);
    ::unlink(tmp_.c_str());
    return s;
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    absl::Status s = IoError("cannot rename onto", path_);
    ::unlink(tmp_.c_str());
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

absl::StatusOr<std::unique_ptr<RandomAccessFile>> RandomAccessFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    absl::Status s = IoError("cannot stat", path);
    ::close(fd);
    return s;
  }
  return std::unique_ptr<RandomAccessFile>(
      new RandomAccessFile(path, fd, static_cast<uint64_t>(st.st_size)));
}

RandomAccessFile::~RandomAccessFile() { ::close(fd_); }

absl::Status RandomAccessFile::Read(uint64_t offset, size_t n, char* out) const {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot read", path_);
    }
    if (r == 0) {
      return errors::OutOfRange("'", path_, "' ends at byte ", offset + done, ", before byte ",
                                offset + n);
    }
    done += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

}  // namespace distflow
