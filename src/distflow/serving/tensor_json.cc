#include "distflow/serving/tensor_json.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {
namespace {

using nlohmann::json;

// Thrown by the parser callback when the body nests too deep; caught in
// ParseJsonObject, never escapes it.
struct TooDeep {};

// Finds the shape from the first element at each depth, then checks every
// list against it, collecting the leaves in row-major order.
absl::Status Flatten(const json& value, const std::vector<int64_t>& dims, size_t depth,
                     absl::string_view what, std::vector<const json*>* leaves) {
  if (depth == dims.size()) {
    if (value.is_array()) {
      return errors::InvalidArgument(what,
                                     ": ragged list (a list where a scalar was expected "
                                     "at depth ",
                                     depth, ")");
    }
    leaves->push_back(&value);
    return absl::OkStatus();
  }
  if (!value.is_array() || static_cast<int64_t>(value.size()) != dims[depth]) {
    return errors::InvalidArgument(
        what, ": ragged list (expected a list of ", dims[depth], " elements at depth ", depth,
        ", got ",
        value.is_array() ? absl::StrCat(value.size(), " elements") : std::string(value.type_name()),
        ")");
  }
  for (const json& v : value) DF_RETURN_IF_ERROR(Flatten(v, dims, depth + 1, what, leaves));
  return absl::OkStatus();
}

absl::StatusOr<std::string> DecodeBase64(const json& v, absl::string_view what) {
  if (v.size() != 1 || v.begin().key() != "b64" || !v.begin().value().is_string()) {
    return errors::InvalidArgument(what, ": an object in a tensor must be {\"b64\": \"...\"}, got ",
                                   v.dump().substr(0, 80));
  }
  std::string out;
  if (!absl::Base64Unescape(v.begin().value().get_ref<const std::string&>(), &out)) {
    return errors::InvalidArgument(what, ": \"b64\" holds no valid base64");
  }
  return out;
}

template <typename T>
absl::Status ConvertLeaves(const std::vector<const json*>& leaves, DataType dtype,
                           absl::string_view what, T* out) {
  auto bad = [&](const json& v, absl::string_view expected) {
    return errors::InvalidArgument(what, ": expected ", expected, " for ", DataTypeString(dtype),
                                   ", got ", v.dump().substr(0, 80));
  };
  for (size_t i = 0; i < leaves.size(); ++i) {
    const json& v = *leaves[i];
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) return bad(v, "true or false");
      out[i] = v.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (v.is_string()) {
        out[i] = v.get<std::string>();
      } else if (v.is_object()) {
        DF_ASSIGN_OR_RETURN(out[i], DecodeBase64(v, what));
      } else {
        return bad(v, "strings or {\"b64\": ...}");
      }
    } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, bfloat16>) {
      double d;
      if (v.is_number()) {
        d = v.get<double>();
      } else if (v.is_string() && v.get_ref<const std::string&>() == "NaN") {
        d = std::numeric_limits<double>::quiet_NaN();
      } else if (v.is_string() && v.get_ref<const std::string&>() == "Infinity") {
        d = std::numeric_limits<double>::infinity();
      } else if (v.is_string() && v.get_ref<const std::string&>() == "-Infinity") {
        d = -std::numeric_limits<double>::infinity();
      } else {
        return bad(v, "numbers");
      }
      out[i] = static_cast<T>(d);
    } else {
      if (!v.is_number_integer()) return bad(v, "integers");
      if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
          return bad(v, "integers in range");
        }
        out[i] = static_cast<T>(u);
      } else {
        const int64_t s = v.get<int64_t>();
        if constexpr (std::is_signed_v<T>) {
          if (s < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
              s > static_cast<int64_t>(std::numeric_limits<T>::max())) {
            return bad(v, "integers in range");
          }
        } else {
          if (s < 0 || static_cast<uint64_t>(s) > std::numeric_limits<T>::max()) {
            return bad(v, "integers in range");
          }
        }
        out[i] = static_cast<T>(s);
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
void AppendElement(const T& v, bool binary_strings, std::string* out) {
  if constexpr (std::is_same_v<T, std::string>) {
    AppendStringJson(v, binary_strings, out);
  } else if constexpr (std::is_same_v<T, bool>) {
    out->append(v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bfloat16>) {
    AppendFloatJson(static_cast<float>(v), /*single_precision=*/true, out);
  } else if constexpr (std::is_same_v<T, double>) {
    AppendFloatJson(v, /*single_precision=*/false, out);
  } else {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out->append(buf, r.ptr);
  }
}

// Appends the elements [*offset, ...) of `base` nested by dims[depth...].
template <typename T>
void AppendNested(const T* base, absl::Span<const int64_t> dims, size_t depth, int64_t* offset,
                  bool binary_strings, std::string* out) {
  if (depth == dims.size()) {
    AppendElement(base[(*offset)++], binary_strings, out);
    return;
  }
  out->push_back('[');
  for (int64_t i = 0; i < dims[depth]; ++i) {
    if (i > 0) out->push_back(',');
    AppendNested(base, dims, depth + 1, offset, binary_strings, out);
  }
  out->push_back(']');
}

void AppendTensorFrom(const Tensor& t, absl::Span<const int64_t> dims, int64_t offset,
                      bool binary_strings, std::string* out) {
  const bool visited = VisitDataType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    int64_t at = offset;
    AppendNested(t.base<T>(), dims, 0, &at, binary_strings, out);
  });
  if (!visited) out->append("null");
}

}  // namespace

absl::StatusOr<json> ParseJsonObject(absl::string_view body) {
  json doc;
  try {
    doc = json::parse(body.begin(), body.end(), [](int depth, json::parse_event_t event, json&) {
      if (depth > kMaxJsonDepth && (event == json::parse_event_t::object_start ||
                                    event == json::parse_event_t::array_start)) {
        throw TooDeep{};
      }
      return true;
    });
  } catch (const TooDeep&) {
    return errors::InvalidArgument("JSON nests lists and objects more than ", kMaxJsonDepth,
                                   " deep");
  } catch (const json::exception& e) {
    return errors::InvalidArgument("malformed JSON: ", e.what());
  }
  if (!doc.is_object()) {
    return errors::InvalidArgument("the request body must be a JSON object, got ", doc.type_name());
  }
  return doc;
}

absl::StatusOr<Tensor> TensorFromJson(const json& value, DataType dtype, absl::string_view what) {
  dtype = BaseType(dtype);
  if (dtype == DT_RESOURCE || dtype == DT_VARIANT || !DataTypeIsSupported(dtype)) {
    return errors::InvalidArgument(what, ": values of type ", DataTypeString(dtype),
                                   " cannot be given in JSON");
  }
  std::vector<int64_t> dims;
  for (const json* v = &value; v->is_array(); v = &(*v)[0]) {
    dims.push_back(static_cast<int64_t>(v->size()));
    if (v->empty()) break;
  }
  std::vector<const json*> leaves;
  DF_RETURN_IF_ERROR(Flatten(value, dims, 0, what, &leaves));
  TensorShape shape;
  DF_RETURN_IF_ERROR(TensorShape::BuildTensorShape(dims, &shape));
  Tensor t;
  DF_RETURN_IF_ERROR(Tensor::Allocate(dtype, shape, &t, std::string(what)));
  absl::Status status;
  VisitDataType(dtype, [&](auto zero) {
    using T = decltype(zero);
    status = ConvertLeaves<T>(leaves, dtype, what, t.base<T>());
  });
  DF_RETURN_IF_ERROR(status);
  return t;
}

void AppendTensorJson(const Tensor& t, bool binary_strings, std::string* out) {
  AppendTensorFrom(t, t.shape().dim_sizes(), 0, binary_strings, out);
}

void AppendTensorRowJson(const Tensor& t, int64_t row, bool binary_strings, std::string* out) {
  const absl::Span<const int64_t> inner = t.shape().dim_sizes().subspan(1);
  int64_t row_elements = 1;
  for (int64_t d : inner) row_elements *= d;
  AppendTensorFrom(t, inner, row * row_elements, binary_strings, out);
}

size_t Utf8SequenceLength(absl::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool IsValidUtf8(absl::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void AppendStringJson(absl::string_view s, bool binary, std::string* out) {
  if (binary || !IsValidUtf8(s)) {
    absl::StrAppend(out, "{\"b64\":\"", absl::Base64Escape(s), "\"}");
    return;
  }
  out->push_back('"');
  for (const char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out->append("\\u00");
          out->push_back(kHex[(c >> 4) & 0xF]);
          out->push_back(kHex[c & 0xF]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendFloatJson(double v, bool single_precision, std::string* out) {
  if (std::isnan(v)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "Infinity" : "-Infinity");
    return;
  }
  char buf[32];
  const auto r = single_precision ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v))
                                  : std::to_chars(buf, buf + sizeof(buf), v);
  const absl::string_view text(buf, static_cast<size_t>(r.ptr - buf));
  out->append(text.data(), text.size());
  bool whole = true;  // no '.' and no exponent: "3" is written "3.0"
  for (const char c : text) whole = whole && c != '.' && c != 'e';
  if (whole) out->append(".0");
}

bool IsBinaryOutputKey(absl::string_view key) { return absl::EndsWith(key, "_bytes"); }

}  // namespace distflow
