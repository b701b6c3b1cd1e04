#include "npy.h"

#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

constexpr absl::string_view kMagic = "\x93NUMPY";

// The value text of `key` in the header dict ("{'descr': '<f4', ...}"):
// up to the next top-level comma, or the whole tuple for "shape".
bool FindHeaderValue(absl::string_view header, absl::string_view key, absl::string_view* value) {
  for (const char quote : {'\'', '"'}) {
    const std::string quoted = absl::StrCat(std::string(1, quote), key, std::string(1, quote));
    size_t pos = header.find(quoted);
    if (pos == absl::string_view::npos) continue;
    pos = header.find(':', pos + quoted.size());
    if (pos == absl::string_view::npos) return false;
    absl::string_view rest = absl::StripLeadingAsciiWhitespace(header.substr(pos + 1));
    size_t end;
    if (!rest.empty() && rest[0] == '(') {
      end = rest.find(')');
      if (end == absl::string_view::npos) return false;
      ++end;
    } else {
      end = rest.find_first_of(",}");
      if (end == absl::string_view::npos) end = rest.size();
    }
    *value = absl::StripAsciiWhitespace(rest.substr(0, end));
    return true;
  }
  return false;
}

absl::string_view Unquote(absl::string_view s) {
  if (s.size() >= 2 && (s[0] == '\'' || s[0] == '"') && s.back() == s[0]) {
    return s.substr(1, s.size() - 2);
  }
  return s;
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(absl::string_view data, const std::string& name) {
  auto bad = [&name](auto... why) {
    return errors::InvalidArgument("npy file '", name, "': ", why...);
  };
  if (data.size() < 10 || data.substr(0, kMagic.size()) != kMagic) {
    return bad("not a NumPy .npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(data[6]);
  size_t header_len = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(data[8]) |
                 static_cast<size_t>(static_cast<unsigned char>(data[9])) << 8;
    header_start = 10;
  } else if (major == 2) {
    if (data.size() < 12) return bad("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) {
      header_len |= static_cast<size_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    }
    header_start = 12;
  } else {
    return bad("unsupported format version ", major, " (only 1 and 2 are)");
  }
  if (data.size() < header_start + header_len) return bad("truncated header");
  const absl::string_view header = data.substr(header_start, header_len);

  absl::string_view descr, fortran, shape_text;
  if (!FindHeaderValue(header, "descr", &descr) ||
      !FindHeaderValue(header, "fortran_order", &fortran) ||
      !FindHeaderValue(header, "shape", &shape_text)) {
    return bad("header lacks descr, fortran_order or shape: ", header);
  }
  descr = Unquote(descr);
  if (fortran != "False") return bad("Fortran-order arrays are not supported");

  DataType dtype;
  int item_size;
  if (descr == "<f4") {
    dtype = DT_FLOAT, item_size = 4;
  } else if (descr == "<f8") {
    dtype = DT_DOUBLE, item_size = 8;
  } else if (descr == "<i4") {
    dtype = DT_INT32, item_size = 4;
  } else if (descr == "<i8") {
    dtype = DT_INT64, item_size = 8;
  } else if (descr == "|u1" || descr == "<u1") {
    dtype = DT_UINT8, item_size = 1;
  } else if (descr == "|b1" || descr == "<b1") {
    dtype = DT_BOOL, item_size = 1;
  } else {
    return bad("unsupported dtype '", descr, "' (supported: <f4, <f8, <i4, <i8, |u1, |b1)");
  }

  if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')') {
    return bad("malformed shape '", shape_text, "'");
  }
  std::vector<int64_t> dims;
  for (absl::string_view part : absl::StrSplit(shape_text.substr(1, shape_text.size() - 2), ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;
    int64_t d;
    if (!absl::SimpleAtoi(part, &d) || d < 0) {
      return bad("malformed shape '", shape_text, "'");
    }
    dims.push_back(d);
  }
  TensorShape shape;
  absl::Status s = TensorShape::BuildTensorShape(dims, &shape);
  if (!s.ok()) return bad(s.message());

  const absl::string_view payload = data.substr(header_start + header_len);
  int64_t need = 0;
  if (!MultiplyWithoutOverflow<int64_t>(shape.num_elements(), item_size, &need)) {
    return bad("shape ", shape.DebugString(), " and dtype '", descr,
               "' need more than 2^63 - 1 bytes of data, found ", payload.size());
  }
  if (payload.size() != static_cast<uint64_t>(need)) {
    return bad("expected ", need, " bytes of data for shape ", shape.DebugString(), " and dtype '",
               descr, "', found ", payload.size());
  }
  Tensor t;
  DF_RETURN_IF_ERROR(errors::Annotate(Tensor::Allocate(dtype, shape, &t),
                                      absl::StrCat("npy file '", name, "': ")));
  if (dtype == DT_BOOL) {
    bool* out = t.base<bool>();
    for (size_t i = 0; i < payload.size(); ++i) out[i] = payload[i] != 0;
  } else if (need > 0) {
    std::memcpy(t.raw_data(), payload.data(), need);
  }
  return t;
}

absl::StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  absl::StatusOr<std::string> data = ReadFileToString(path);
  if (!data.ok()) {
    return absl::Status(data.status().code(),
                        absl::StrCat("npy file '", path, "': ", data.status().message()));
  }
  return ParseNpy(*data, path);
}

}  // namespace distflow
