// FixedLengthRecordDatasetV2: the records of each file in turn, as string
// scalars. A file is header_bytes, then records of record_bytes each, then
// footer_bytes; compression_type "GZIP" reads it through zlib first. A file
// shorter than its header and footer, or whose body is not a whole number
// of records (a truncated file, a wrong record size), is DataLoss naming
// the file and the sizes — never a silently short record.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distflow/core/checked_math.h"
#include "distflow/core/status.h"
#include "distflow/data/dataset_op_kernel.h"
#include "distflow/data/file_byte_stream.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

// Bytes read from a file at a time when buffer_size is 0 (the default).
constexpr int64_t kDefaultReadBuffer = 256 << 10;

struct RecordFormat {
  int64_t header_bytes, record_bytes, footer_bytes, read_buffer;
  FileByteStream::Compression compression;
};

// Reads one file's records, keeping footer_bytes of lookahead so the footer
// is never returned as a record.
class RecordReader {
 public:
  RecordReader(std::unique_ptr<FileByteStream> stream, const RecordFormat& format)
      : stream_(std::move(stream)), format_(format) {}

  // The next record, or *end at the file's end (after checking the footer).
  absl::Status Next(std::string* record, bool* end) {
    if (!header_skipped_) {
      // In read_buffer pieces: a header may be larger than what fits.
      for (int64_t left = format_.header_bytes; left > 0;) {
        DF_RETURN_IF_ERROR(Fill(std::min(left, format_.read_buffer)));
        const int64_t take = std::min(left, Available());
        if (take == 0) {
          return errors::DataLoss("file '", stream_->path(), "' has ", consumed_,
                                  " bytes, fewer than its header of ", format_.header_bytes,
                                  " bytes");
        }
        pos_ += static_cast<size_t>(take);
        consumed_ += take;
        left -= take;
      }
      header_skipped_ = true;
    }
    const int64_t want = format_.record_bytes + format_.footer_bytes;  // checked by the op
    DF_RETURN_IF_ERROR(Fill(want));
    if (Available() < want) {
      *end = true;
      if (Available() == format_.footer_bytes) return absl::OkStatus();
      return errors::DataLoss("file '", stream_->path(), "' ends with ", Available(),
                              " bytes after its last whole record at byte ", consumed_,
                              ", expected a footer of ", format_.footer_bytes,
                              " bytes (records of ", format_.record_bytes,
                              " bytes after a header of ", format_.header_bytes,
                              " bytes): the file is truncated or the record size is wrong");
    }
    *end = false;
    record->assign(buf_, pos_, static_cast<size_t>(format_.record_bytes));
    pos_ += static_cast<size_t>(format_.record_bytes);
    consumed_ += format_.record_bytes;
    return absl::OkStatus();
  }

 private:
  int64_t Available() const { return static_cast<int64_t>(buf_.size() - pos_); }

  // Reads until `n` bytes are buffered or the file ends.
  absl::Status Fill(int64_t n) {
    while (Available() < n && !eof_) {
      buf_.erase(0, pos_);
      pos_ = 0;
      const int64_t chunk = std::max(format_.read_buffer, n - Available());
      DF_RETURN_IF_ERROR(stream_->Read(chunk, &scratch_));
      if (scratch_.empty()) eof_ = true;
      buf_.append(scratch_);
    }
    return absl::OkStatus();
  }

  const std::unique_ptr<FileByteStream> stream_;
  const RecordFormat format_;
  std::string buf_, scratch_;
  size_t pos_ = 0;
  int64_t consumed_ = 0;  // bytes of the file before buf_[pos_]
  bool header_skipped_ = false;
  bool eof_ = false;
};

class FixedLengthRecordDataset final : public DatasetBase {
 public:
  FixedLengthRecordDataset(std::string node, std::vector<std::string> files, RecordFormat format)
      : DatasetBase(std::move(node), {DT_STRING}, {PartialTensorShape({})}),
        files_(std::move(files)),
        format_(format) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(
        new Iterator(std::static_pointer_cast<const FixedLengthRecordDataset>(shared_from_this())));
  }

 private:
  std::string OpName() const override { return "FixedLengthRecordDatasetV2"; }

  class Iterator final : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const FixedLengthRecordDataset> dataset)
        : dataset_(std::move(dataset)) {}

    absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      const RecordFormat& format = dataset_->format_;
      while (next_file_ < dataset_->files_.size() || reader_ != nullptr) {
        if (reader_ == nullptr) {
          DF_ASSIGN_OR_RETURN(
              std::unique_ptr<FileByteStream> stream,
              FileByteStream::Open(dataset_->files_[next_file_++], format.compression));
          reader_ = std::make_unique<RecordReader>(std::move(stream), format);
        }
        std::string record;
        bool end = false;
        DF_RETURN_IF_ERROR(reader_->Next(&record, &end));
        if (!end) {
          *end_of_sequence = false;
          out->push_back(Tensor::Scalar<std::string>(std::move(record)));
          return absl::OkStatus();
        }
        reader_.reset();
      }
      *end_of_sequence = true;
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const FixedLengthRecordDataset> dataset_;
    size_t next_file_ = 0;
    std::unique_ptr<RecordReader> reader_;
  };

  const std::vector<std::string> files_;
  const RecordFormat format_;
};

class FixedLengthRecordDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    const Tensor& names = ctx->input(0);
    if (names.dtype() != DT_STRING || names.dims() > 1) {
      return errors::InvalidArgument(InputName(0), " must be a string scalar or vector");
    }
    std::vector<std::string> files(names.flat<std::string>().begin(),
                                   names.flat<std::string>().end());
    RecordFormat format;
    DF_ASSIGN_OR_RETURN(format.header_bytes, Int64Input(ctx, 1));
    DF_ASSIGN_OR_RETURN(format.record_bytes, Int64Input(ctx, 2));
    DF_ASSIGN_OR_RETURN(format.footer_bytes, Int64Input(ctx, 3));
    DF_ASSIGN_OR_RETURN(format.read_buffer, Int64Input(ctx, 4));
    if (format.header_bytes < 0 || format.footer_bytes < 0 || format.read_buffer < 0) {
      return errors::InvalidArgument("node '", name(),
                                     "': header_bytes, footer_bytes and buffer_size must be "
                                     ">= 0, got ",
                                     format.header_bytes, ", ", format.footer_bytes, ", ",
                                     format.read_buffer);
    }
    if (format.record_bytes <= 0) {
      return errors::InvalidArgument(InputName(2), " must be positive, got ", format.record_bytes);
    }
    // What the reader holds at once: a record and the footer.
    int64_t lookahead;
    const int64_t cap = MaxTensorBytes();
    if (!AddWithoutOverflow(format.record_bytes, format.footer_bytes, &lookahead) ||
        (cap > 0 && lookahead > cap)) {
      return errors::ResourceExhausted("node '", name(), "': record_bytes ", format.record_bytes,
                                       " and footer_bytes ", format.footer_bytes,
                                       " exceed the limit of ", cap,
                                       " bytes for one tensor (DISTFLOW_MAX_TENSOR_BYTES)");
    }
    if (format.read_buffer == 0) format.read_buffer = kDefaultReadBuffer;
    format.read_buffer = std::min(format.read_buffer, lookahead + kDefaultReadBuffer);
    const Tensor& compression = ctx->input(5);
    if (compression.dtype() != DT_STRING || compression.dims() != 0) {
      return errors::InvalidArgument(InputName(5), " must be a string scalar");
    }
    DF_ASSIGN_OR_RETURN(format.compression,
                        FileByteStream::ParseCompression(compression.scalar<std::string>()));
    return std::make_shared<const FixedLengthRecordDataset>(name(), std::move(files), format);
  }
};

REGISTER_KERNEL_BUILDER(Name("FixedLengthRecordDatasetV2").Device(kDeviceCpu),
                        FixedLengthRecordDatasetOp);

}  // namespace
}  // namespace distflow
