// Clocks, the process's file limit, and file I/O: whole files, files
// written under a temporary name and renamed into place, positioned
// reads. Free functions are thread-safe; the classes say what they allow.
#ifndef DISTFLOW_CORE_ENV_H_
#define DISTFLOW_CORE_ENV_H_

#include <cstdint>
#include <memory>
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

// A file written under a temporary name beside `path` and renamed onto
// `path` by Commit (after fsync), so readers see the whole file or the old
// one, never a torn file. Destroyed without a successful Commit, it removes
// the temporary file. Not thread-safe.
class AtomicFileWriter {
 public:
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>> Create(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  absl::Status Append(absl::string_view data);
  // REQUIRES: called at most once; no Append after it.
  absl::Status Commit();

 private:
  AtomicFileWriter(std::string path, std::string tmp, int fd)
      : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}
  const std::string path_;
  const std::string tmp_;
  int fd_;  // -1 once closed
};

// A file opened for reads at any offset. Read may be called concurrently.
class RandomAccessFile {
 public:
  // NotFound when `path` does not exist.
  static absl::StatusOr<std::unique_ptr<RandomAccessFile>> Open(const std::string& path);
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  // Reads bytes [offset, offset + n) into `out`. OutOfRange when the file
  // ends before them.
  absl::Status Read(uint64_t offset, size_t n, char* out) const;

 private:
  RandomAccessFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  const std::string path_;
  const int fd_;
  const uint64_t size_;
};

}  // namespace distflow

#endif  // DISTFLOW_CORE_ENV_H_
