#include "distflow/kernels/text_file_table_init.h"

#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

// Writes the text `field` (or the line number) as element `i` of `out`.
absl::Status Store(absl::string_view field, int64_t line_number, bool is_number, int64_t i,
                   Tensor* out) {
  switch (out->dtype()) {
    case DT_STRING:
      out->flat<std::string>()[i] = is_number ? absl::StrCat(line_number) : std::string(field);
      return absl::OkStatus();
    case DT_INT64:
    case DT_INT32: {
      int64_t v = line_number;
      if (!is_number && !absl::SimpleAtoi(field, &v)) {
        return errors::InvalidArgument("'", field, "' is not an integer");
      }
      if (out->dtype() == DT_INT64) {
        out->flat<int64_t>()[i] = v;
      } else if (v < std::numeric_limits<int32_t>::min() ||
                 v > std::numeric_limits<int32_t>::max()) {
        return errors::InvalidArgument(v, " does not fit int32");
      } else {
        out->flat<int32_t>()[i] = static_cast<int32_t>(v);
      }
      return absl::OkStatus();
    }
    case DT_FLOAT:
    case DT_DOUBLE: {
      double v = static_cast<double>(line_number);
      if (!is_number && !absl::SimpleAtod(field, &v)) {
        return errors::InvalidArgument("'", field, "' is not a number");
      }
      if (out->dtype() == DT_FLOAT) {
        out->flat<float>()[i] = static_cast<float>(v);
      } else {
        out->flat<double>()[i] = v;
      }
      return absl::OkStatus();
    }
    default:
      return errors::InvalidArgument("a text file cannot fill ", DataTypeString(out->dtype()),
                                     " entries");
  }
}

}  // namespace

absl::StatusOr<TextFileEntries> ParseTextFileEntries(absl::string_view contents,
                                                     const std::string& file,
                                                     const TextFileColumns& columns,
                                                     DataType key_dtype, DataType value_dtype) {
  std::vector<absl::string_view> lines = absl::StrSplit(contents, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // the last newline
  int64_t n = static_cast<int64_t>(lines.size());
  if (columns.vocab_size >= 0) {
    if (columns.vocab_size > n) {
      return errors::InvalidArgument(file, " has ", n, " lines but vocab_size is ",
                                     columns.vocab_size);
    }
    n = columns.vocab_size;
  }
  TextFileEntries entries;
  DF_RETURN_IF_ERROR(Tensor::Allocate(key_dtype, TensorShape({n}), &entries.keys, file));
  DF_RETURN_IF_ERROR(Tensor::Allocate(value_dtype, TensorShape({n}), &entries.values, file));
  for (int64_t i = 0; i < n; ++i) {
    absl::string_view line = lines[i];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::vector<absl::string_view> fields;
    if (columns.key_index >= 0 || columns.value_index >= 0) {
      fields = absl::StrSplit(line, columns.delimiter);
    }
    int64_t line_number = 0;
    if (!AddWithoutOverflow<int64_t>(i, columns.offset, &line_number)) {
      return errors::InvalidArgument(file, ": line number ", i, " plus offset overflows");
    }
    auto column = [&](int64_t index, Tensor* out) -> absl::Status {
      absl::string_view field = line;
      if (index >= 0) {
        if (index >= static_cast<int64_t>(fields.size())) {
          return errors::InvalidArgument(file, " line ", i + 1, " has ", fields.size(),
                                         " columns; column ", index, " is asked for");
        }
        field = fields[index];
      }
      return errors::Annotate(Store(field, line_number, index == kLineNumber, i, out),
                              absl::StrCat(file, " line ", i + 1, ": "));
    };
    DF_RETURN_IF_ERROR(column(columns.key_index, &entries.keys));
    DF_RETURN_IF_ERROR(column(columns.value_index, &entries.values));
  }
  return entries;
}

}  // namespace distflow
