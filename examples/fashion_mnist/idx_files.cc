#include "fashion_mnist/idx_files.h"

#include <functional>
#include <memory>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/data/file_byte_stream.h"

namespace distflow {
namespace fashion_mnist {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dims
constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dim
constexpr int64_t kChunk = 1 << 20;

uint32_t BigEndian32(const std::string& s, size_t at) {
  return static_cast<uint32_t>(static_cast<uint8_t>(s[at])) << 24 |
         static_cast<uint32_t>(static_cast<uint8_t>(s[at + 1])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(s[at + 2])) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(s[at + 3]));
}

// Reads a gzipped IDX file: checks the header (`dims` sizes after the
// count, which must equal `shape`) and that the body has exactly count *
// prod(shape) bytes; calls `check_body` on each chunk of the body with its
// offset. Returns the count.
absl::StatusOr<int64_t> ReadIdx(
    const std::string& path, uint32_t magic, const std::vector<uint32_t>& shape,
    const std::function<absl::Status(const std::string&, int64_t)>& check_body) {
  DF_ASSIGN_OR_RETURN(std::unique_ptr<FileByteStream> in,
                      FileByteStream::Open(path, FileByteStream::Compression::kGzip));
  const size_t header_bytes = 8 + 4 * shape.size();
  std::string header;
  DF_RETURN_IF_ERROR(in->Read(static_cast<int64_t>(header_bytes), &header));
  if (header.size() < header_bytes || BigEndian32(header, 0) != magic) {
    return errors::DataLoss("file '", path, "' is not an IDX file of the expected kind (magic ",
                            magic, ")");
  }
  const int64_t count = BigEndian32(header, 4);
  int64_t row = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const uint32_t got = BigEndian32(header, 8 + 4 * i);
    if (got != shape[i]) {
      return errors::DataLoss("file '", path, "' has dimension ", i + 1, " of size ", got,
                              ", expected ", shape[i]);
    }
    row *= got;
  }
  const int64_t want = count * row;
  int64_t seen = 0;
  std::string chunk;
  for (;;) {
    DF_RETURN_IF_ERROR(in->Read(kChunk, &chunk));
    if (chunk.empty()) break;
    if (seen + static_cast<int64_t>(chunk.size()) > want) {
      return errors::DataLoss("file '", path, "' is longer than its header says (", count,
                              " examples of ", row, " bytes)");
    }
    DF_RETURN_IF_ERROR(check_body(chunk, seen));
    seen += static_cast<int64_t>(chunk.size());
  }
  if (seen != want) {
    return errors::DataLoss("file '", path, "' is truncated: ", seen, " bytes of data, its header ",
                            "says ", count, " examples of ", row, " bytes (", want, ")");
  }
  return count;
}

absl::StatusOr<IdxSplit> OpenSplit(const std::string& dir, const std::string& prefix) {
  IdxSplit split;
  split.images = dir + "/" + prefix + "-images-idx3-ubyte.gz";
  split.labels = dir + "/" + prefix + "-labels-idx1-ubyte.gz";
  auto no_check = [](const std::string&, int64_t) { return absl::OkStatus(); };
  DF_ASSIGN_OR_RETURN(split.count,
                      ReadIdx(split.images, kImagesMagic, {kImageSide, kImageSide}, no_check));
  auto labels_in_range = [&](const std::string& chunk, int64_t offset) -> absl::Status {
    for (size_t i = 0; i < chunk.size(); ++i) {
      const int label = static_cast<uint8_t>(chunk[i]);
      if (label >= kNumClasses) {
        return errors::DataLoss("file '", split.labels, "' has label ", label, " at index ",
                                offset + static_cast<int64_t>(i), ", outside 0-", kNumClasses - 1);
      }
    }
    return absl::OkStatus();
  };
  DF_ASSIGN_OR_RETURN(int64_t labels, ReadIdx(split.labels, kLabelsMagic, {}, labels_in_range));
  if (labels != split.count) {
    return errors::DataLoss("'", split.images, "' holds ", split.count, " images but '",
                            split.labels, "' holds ", labels, " labels");
  }
  return split;
}

}  // namespace

absl::StatusOr<FashionMnistFiles> OpenFashionMnist(const std::string& dir) {
  FashionMnistFiles files;
  DF_ASSIGN_OR_RETURN(files.train, OpenSplit(dir, "train"));
  DF_ASSIGN_OR_RETURN(files.test, OpenSplit(dir, "t10k"));
  return files;
}

}  // namespace fashion_mnist
}  // namespace distflow
