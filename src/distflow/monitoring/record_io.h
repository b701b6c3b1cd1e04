// TFRecord framing, the container of TensorBoard event files and of
// TFRecordDataset files: each record is
//   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes |
//   length bytes of data          | uint32 masked CRC-32C of the data
// (crc32c::Mask). Pure functions: thread-safe.
#ifndef DISTFLOW_MONITORING_RECORD_IO_H_
#define DISTFLOW_MONITORING_RECORD_IO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace distflow {

// Appends one framed record holding `data` to `out`.
void AppendRecord(absl::string_view data, std::string* out);

// The records of `contents`, in order. DataLoss naming `source` and the
// byte offset of the record when a length or data CRC does not match, a
// record is cut short, or a length is over `max_record_bytes` (checked
// before anything is allocated for it).
absl::StatusOr<std::vector<std::string>> ParseRecords(absl::string_view contents,
                                                      absl::string_view source,
                                                      uint64_t max_record_bytes = 64 << 20);

}  // namespace distflow

#endif  // DISTFLOW_MONITORING_RECORD_IO_H_
