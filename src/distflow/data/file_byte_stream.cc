#include "distflow/data/file_byte_stream.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "distflow/core/file_roots.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

// Largest single read: keeps each zlib call within its `unsigned` length.
constexpr int64_t kMaxChunk = 1 << 30;

// errno's status, by absl::ErrnoToStatus's rule (as core/env.h's files).
absl::Status OpenError(const std::string& path) {
  return absl::ErrnoToStatus(errno, absl::StrCat("cannot open file '", path, "'"));
}

class PlainStream final : public FileByteStream {
 public:
  PlainStream(std::string path, std::FILE* f) : FileByteStream(std::move(path)), f_(f) {}
  ~PlainStream() override { std::fclose(f_); }

  absl::Status Read(int64_t n, std::string* out) override {
    out->resize(static_cast<size_t>(n));
    const size_t got = std::fread(out->data(), 1, out->size(), f_);
    out->resize(got);
    if (got < static_cast<size_t>(n) && std::ferror(f_)) {
      return errors::DataLoss("error reading file '", path(), "': ", std::strerror(errno));
    }
    return absl::OkStatus();
  }

 private:
  std::FILE* const f_;
};

class GzipStream final : public FileByteStream {
 public:
  GzipStream(std::string path, gzFile f) : FileByteStream(std::move(path)), f_(f) {}
  ~GzipStream() override { gzclose(f_); }

  absl::Status Read(int64_t n, std::string* out) override {
    out->resize(static_cast<size_t>(n));
    int64_t got = 0;
    while (got < n) {
      const int64_t want = std::min(n - got, kMaxChunk);
      const int r = gzread(f_, out->data() + got, static_cast<unsigned>(want));
      if (r < 0) return Corrupt();
      if (r == 0) break;
      got += r;
    }
    out->resize(static_cast<size_t>(got));
    // gzread stops early on a truncated stream and records why.
    int code = Z_OK;
    gzerror(f_, &code);
    if (code != Z_OK && code != Z_STREAM_END) return Corrupt();
    return absl::OkStatus();
  }

 private:
  absl::Status Corrupt() {
    int code = Z_OK;
    const char* why = gzerror(f_, &code);
    return errors::DataLoss("file '", path(), "' is not valid GZIP data (corrupt or truncated): ",
                            why != nullptr ? why : "unknown zlib error");
  }
  const gzFile f_;
};

}  // namespace

absl::StatusOr<FileByteStream::Compression> FileByteStream::ParseCompression(
    const std::string& type) {
  if (type.empty()) return Compression::kNone;
  if (type == "GZIP") return Compression::kGzip;
  return errors::InvalidArgument("unsupported compression_type '", type,
                                 "' (expected \"\" or \"GZIP\")");
}

absl::StatusOr<std::unique_ptr<FileByteStream>> FileByteStream::Open(const std::string& path,
                                                                     Compression compression) {
  DF_RETURN_IF_ERROR(CheckFileAllowed(path));
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return OpenError(path);
  if (compression == Compression::kNone) {
    return std::unique_ptr<FileByteStream>(new PlainStream(path, f));
  }
  const int fd = dup(fileno(f));
  std::fclose(f);
  gzFile gz = fd < 0 ? nullptr : gzdopen(fd, "rb");
  if (gz == nullptr) {
    if (fd >= 0) close(fd);
    return errors::ResourceExhausted("cannot start decompressing file '", path, "'");
  }
  // gzread passes plain (uncompressed) bytes through; a file declared GZIP
  // must really be one.
  if (gzdirect(gz) == 0) {
    return std::unique_ptr<FileByteStream>(new GzipStream(path, gz));
  }
  gzclose(gz);
  return errors::DataLoss("file '", path, "' is not GZIP data (compression_type \"GZIP\")");
}

}  // namespace distflow
