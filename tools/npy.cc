#include "npy.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// The dtypes with an .npy equivalent (strings aside), written and read.
struct NpyType {
  DataType dtype;
  absl::string_view descr;
};
constexpr NpyType kNpyTypes[] = {
    {DT_FLOAT, "<f4"},  {DT_DOUBLE, "<f8"}, {DT_INT8, "|i1"},  {DT_INT16, "<i2"},
    {DT_INT32, "<i4"},  {DT_INT64, "<i8"},  {DT_UINT8, "|u1"}, {DT_UINT16, "<u2"},
    {DT_UINT32, "<u4"}, {DT_UINT64, "<u8"}, {DT_BOOL, "|b1"},
};

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

  // One-byte types may be written with either byte-order mark.
  if (descr.size() == 3 && descr[2] == '1' && descr[0] == '<') {
    descr = descr[1] == 'u' ? "|u1" : descr[1] == 'b' ? "|b1" : descr[1] == 'i' ? "|i1" : descr;
  }
  DataType dtype = DT_INVALID;
  for (const NpyType& t : kNpyTypes) {
    if (t.descr == descr) dtype = t.dtype;
  }
  if (dtype == DT_INVALID) {
    return bad("unsupported dtype '", descr,
               "' (supported: <f4, <f8, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8, |b1)");
  }
  const int item_size = DataTypeSize(dtype);

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

absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor) {
  std::string descr;
  size_t width = 0;  // of a string element
  if (tensor.dtype() == DT_STRING) {
    for (const std::string& e : tensor.flat<std::string>()) width = std::max(width, e.size());
    width = std::max<size_t>(width, 1);
    descr = absl::StrCat("|S", width);
  }
  for (const NpyType& t : kNpyTypes) {
    if (t.dtype == tensor.dtype()) descr = std::string(t.descr);
  }
  if (descr.empty()) {
    return errors::Unimplemented("a ", DataTypeString(tensor.dtype()),
                                 " tensor cannot be written as .npy: NumPy has no such dtype");
  }
  // Python's tuples: "()", "(2,)", "(2, 3)".
  const std::string dims = absl::StrJoin(tensor.shape().dim_sizes(), ", ");
  const std::string shape = absl::StrCat("(", dims, tensor.dims() == 1 ? ",)" : ")");
  std::string header =
      absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Magic, version 1.0 and the 2-byte header length take 10 bytes; the
  // header ends in '\n' and pads the whole preamble to a multiple of 64.
  const size_t padded = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(padded - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  if (tensor.dtype() == DT_STRING) {
    for (const std::string& e : tensor.flat<std::string>()) {
      out += e;
      out.append(width - e.size(), '\0');
    }
  } else {
    out.append(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
  }
  return out;
}

absl::Status WriteNpyFile(const Tensor& tensor, const std::string& path) {
  DF_ASSIGN_OR_RETURN(std::string bytes, SerializeNpy(tensor));
  return WriteStringToFileAtomic(path, bytes);
}

absl::Status WriteNpyFiles(const std::string& dir, const std::vector<std::string>& names,
                           const std::vector<Tensor>& tensors) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return errors::InvalidArgument("cannot make directory '", dir, "': ", ec.message());
  for (size_t i = 0; i < names.size(); ++i) {
    std::string file = names[i];
    for (char& c : file) {
      if (!absl::ascii_isalnum(c) && c != '.' && c != '-' && c != '_') c = '_';
    }
    if (file.empty() || file == "." || file == "..") file = "_" + file;
    DF_RETURN_IF_ERROR(WriteNpyFile(tensors[i], absl::StrCat(dir, "/", file, ".npy")));
  }
  return absl::OkStatus();
}

}  // namespace distflow
