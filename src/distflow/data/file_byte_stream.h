// FileByteStream: reads a file's bytes in order, either as stored or
// decompressed from GZIP (zlib), for the record datasets. Errors name the
// file: NotFound / PermissionDenied when it cannot be opened (or lies
// outside the allowed file roots, core/file_roots.h), DataLoss when the
// compressed data is corrupt or truncated. Not thread-safe.
#ifndef DISTFLOW_DATA_FILE_BYTE_STREAM_H_
#define DISTFLOW_DATA_FILE_BYTE_STREAM_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace distflow {

class FileByteStream {
 public:
  enum class Compression { kNone, kGzip };
  // Compression from TensorFlow's compression_type: "" or "GZIP"
  // (InvalidArgument for anything else, e.g. "ZLIB", which is not supported).
  static absl::StatusOr<Compression> ParseCompression(const std::string& type);

  static absl::StatusOr<std::unique_ptr<FileByteStream>> Open(const std::string& path,
                                                              Compression compression);
  virtual ~FileByteStream() = default;

  // Reads up to `n` bytes into `out` (replacing its contents); fewer only at
  // the end of the file.
  virtual absl::Status Read(int64_t n, std::string* out) = 0;
  const std::string& path() const { return path_; }

 protected:
  explicit FileByteStream(std::string path) : path_(std::move(path)) {}

 private:
  const std::string path_;
};

}  // namespace distflow

#endif  // DISTFLOW_DATA_FILE_BYTE_STREAM_H_
