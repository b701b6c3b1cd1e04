// The entries TensorFlow's InitializeTableFromTextFileV2 reads from a text
// file: one per line, the key and the value each a delimiter-separated
// column (by index), the whole line (-1) or the line number plus an offset
// (-2), parsed as the table's key and value dtypes. Stateless; thread-safe.
#ifndef DISTFLOW_KERNELS_TEXT_FILE_TABLE_INIT_H_
#define DISTFLOW_KERNELS_TEXT_FILE_TABLE_INIT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/framework/tensor.h"

namespace distflow {

inline constexpr int64_t kWholeLine = -1;
inline constexpr int64_t kLineNumber = -2;

struct TextFileColumns {
  int64_t key_index = kWholeLine;
  int64_t value_index = kLineNumber;
  int64_t vocab_size = -1;  // lines to read; -1: every line
  std::string delimiter = "\t";
  int64_t offset = 0;  // added to line numbers
};

struct TextFileEntries {
  Tensor keys, values;  // 1-D, one element per line read
};

// The entries of `contents` (the text of `file`, named in errors). Keys are
// string or int64 (int32 keys are parsed as int64 and narrowed), values
// string, int64, int32, float or double. InvalidArgument naming the file and
// line for a line without the column, a number that does not parse or fit,
// or fewer lines than vocab_size.
absl::StatusOr<TextFileEntries> ParseTextFileEntries(absl::string_view contents,
                                                     const std::string& file,
                                                     const TextFileColumns& columns,
                                                     DataType key_dtype, DataType value_dtype);

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_TEXT_FILE_TABLE_INIT_H_
