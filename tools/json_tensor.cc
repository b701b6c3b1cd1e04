#include "json_tensor.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "distflow/core/status.h"
#include "distflow/serving/tensor_json.h"

namespace distflow {
namespace {

using nlohmann::json;

// JSON has no NaN or infinities (nlohmann writes them as null): they are
// written as the strings "NaN", "Infinity" and "-Infinity", the spelling of
// protobuf's JSON mapping and of Python's json module.
json FloatToJson(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

// The double nearest the shortest decimal that reads back as `f`, so that
// a float32 prints as 0.45 rather than as the double it widens to
// (0.44999998807907104). REQUIRES: f is finite.
double ShortestDouble(float f) {
  char buf[32];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf) - 1, f);
  *r.ptr = '\0';
  return std::strtod(buf, nullptr);
}

template <typename T>
json ElementToJson(const T& v) {
  if constexpr (std::is_same_v<T, bfloat16> || std::is_same_v<T, float>) {
    const float f = static_cast<float>(v);
    return std::isfinite(f) ? json(ShortestDouble(f)) : FloatToJson(f);
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::isfinite(v) ? json(v) : FloatToJson(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return JsonSafeString(v);
  } else {
    return v;
  }
}

json Nest(const Tensor& t, int depth, int64_t* offset) {
  if (depth == t.dims()) {
    json out;
    VisitDataType(t.dtype(), [&](auto zero) {
      using T = decltype(zero);
      out = ElementToJson(t.base<T>()[(*offset)++]);
    });
    return out;
  }
  json list = json::array();
  for (int64_t i = 0; i < t.dim_size(depth); ++i) list.push_back(Nest(t, depth + 1, offset));
  return list;
}

// The text form of one element: JSON for finite numbers, booleans and
// strings; NumPy's nan, inf and -inf for non-finite floats.
template <typename T>
void AppendTextElement(const T& v, std::string* out) {
  if constexpr (std::is_same_v<T, bfloat16> || std::is_floating_point_v<T>) {
    double d;
    if constexpr (std::is_same_v<T, bfloat16>) {
      d = static_cast<float>(v);
    } else {
      d = static_cast<double>(v);
    }
    if (std::isnan(d)) {
      out->append("nan");
      return;
    }
    if (std::isinf(d)) {
      out->append(d > 0 ? "inf" : "-inf");
      return;
    }
  }
  out->append(ElementToJson(v).dump());
}

void AppendText(const Tensor& t, int depth, int64_t* offset, std::string* out) {
  if (depth == t.dims()) {
    VisitDataType(t.dtype(), [&](auto zero) {
      using T = decltype(zero);
      AppendTextElement(t.base<T>()[(*offset)++], out);
    });
    return;
  }
  out->push_back('[');
  for (int64_t i = 0; i < t.dim_size(depth); ++i) {
    if (i > 0) out->push_back(',');
    AppendText(t, depth + 1, offset, out);
  }
  out->push_back(']');
}

// The summary of TensorToTextSummary for the block of `t` at `offset`
// (in elements) spanning dimensions `depth` onward.
void AppendSummary(const Tensor& t, int depth, int64_t offset, const std::vector<int64_t>& strides,
                   std::string* out) {
  constexpr int64_t kEdge = 3;
  if (depth == t.dims()) {
    VisitDataType(t.dtype(), [&](auto zero) {
      using T = decltype(zero);
      AppendTextElement(t.base<T>()[offset], out);
    });
    return;
  }
  const int64_t n = t.dim_size(depth);
  out->push_back('[');
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out->push_back(',');
    if (n > 2 * kEdge && i == kEdge) {
      out->append("...");
      i = n - kEdge - 1;
      continue;
    }
    AppendSummary(t, depth + 1, offset + i * strides[depth], strides, out);
  }
  out->push_back(']');
}

}  // namespace

std::string JsonSafeString(absl::string_view s) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      static constexpr char kHex[] = "0123456789abcdef";
      const unsigned char c = static_cast<unsigned char>(s[i]);
      out.append("\\x");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
      ++i;
    } else if (s[i] == '\\') {
      out.append("\\\\");
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

absl::Status CheckJsonNesting(absl::string_view text, int max_depth, const std::string& name) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return errors::InvalidArgument("feed '", name, "': value nests more than ", max_depth,
                                       " lists deep");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> TensorFromJson(const json& value, DataType dtype, const std::string& name) {
  int depth = 0;
  for (const json* v = &value; v->is_array() && !v->empty(); v = &(*v)[0]) {
    if (++depth > kMaxFeedRank) {
      return errors::InvalidArgument("feed '", name, "': value nests more than ", kMaxFeedRank,
                                     " lists deep");
    }
  }
  // The serving API's reading, which also takes {"b64": ...} strings and
  // "NaN" / "Infinity" for floats.
  const std::string what = absl::StrCat("feed '", name, "'");
  return TensorFromJson(value, dtype, absl::string_view(what));
}

json TensorValuesToJson(const Tensor& t) {
  json values = json::array();
  VisitDataType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = t.base<T>();
    for (int64_t i = 0; i < t.NumElements(); ++i) values.push_back(ElementToJson(p[i]));
  });
  return values;
}

json TensorToNestedJson(const Tensor& t) {
  int64_t offset = 0;
  return Nest(t, 0, &offset);
}

std::string TensorToText(const Tensor& t) {
  std::string out;
  int64_t offset = 0;
  AppendText(t, 0, &offset, &out);
  return out;
}

std::string TensorToTextSummary(const Tensor& t) {
  if (t.NumElements() <= kMaxPrintedElements) return TensorToText(t);
  std::vector<int64_t> strides(t.dims(), 1);
  for (int d = t.dims() - 2; d >= 0; --d) strides[d] = strides[d + 1] * t.dim_size(d + 1);
  std::string out;
  AppendSummary(t, 0, 0, strides, &out);
  return out;
}

}  // namespace distflow
