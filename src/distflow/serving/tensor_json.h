// Tensors in TensorFlow Serving's REST JSON, both ways. A value is a number,
// boolean or string (a scalar) or a nested list, whose nesting gives the
// shape (it must be rectangular). A binary string is {"b64": "..."}
// (standard base64, padding optional) anywhere a string may be. Floats also
// read the strings "NaN", "Infinity" and "-Infinity"; they are written as
// the bare tokens NaN, Infinity and -Infinity, as TF Serving writes them
// (Python's json module reads those).
//
// Output strings are written as JSON strings, or as {"b64": ...} when the
// output's key ends in "_bytes" (TF Serving's rule) or the bytes are not
// valid UTF-8 (JSON cannot carry them otherwise).
//
// Pure functions; thread-safe.
#ifndef DISTFLOW_SERVING_TENSOR_JSON_H_
#define DISTFLOW_SERVING_TENSOR_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/framework/tensor.h"
#include "nlohmann/json.hpp"

namespace distflow {

// The deepest nesting of lists and objects a request may have. Deeper bodies
// are refused before anything walks them.
inline constexpr int kMaxJsonDepth = 64;

// Parses a request body. InvalidArgument with the parser's message (and the
// byte offset) for malformed JSON, a body that is not a JSON object, or one
// nested deeper than kMaxJsonDepth.
absl::StatusOr<nlohmann::json> ParseJsonObject(absl::string_view body);

// The tensor of `dtype` that `value` spells. InvalidArgument naming `what`
// (e.g. "input 'x'") for a ragged list, an element of the wrong kind (a
// string for a number type, a fraction for an integer type, a non-boolean
// for bool, a malformed {"b64": ...}), an integer out of the type's range,
// or a dtype JSON cannot spell; ResourceExhausted when the tensor may not be
// allocated.
absl::StatusOr<Tensor> TensorFromJson(const nlohmann::json& value, DataType dtype,
                                      absl::string_view what);

// Appends `t` as a nested JSON list (a bare value for a scalar).
void AppendTensorJson(const Tensor& t, bool binary_strings, std::string* out);
// Appends row `row` of `t` (its slice along dimension 0) as nested JSON.
// REQUIRES: t.dims() >= 1 and 0 <= row < t.dim_size(0).
void AppendTensorRowJson(const Tensor& t, int64_t row, bool binary_strings, std::string* out);
// Appends `s` as a JSON string, or {"b64": ...} when `binary` or when `s` is
// not valid UTF-8.
void AppendStringJson(absl::string_view s, bool binary, std::string* out);
// Appends `v` as TF Serving writes a float: the shortest form that reads back
// as the same value, with ".0" for whole numbers; NaN, Infinity, -Infinity.
void AppendFloatJson(double v, bool single_precision, std::string* out);

// The length of the well-formed UTF-8 sequence at s[i], or 0 when the
// bytes there are not one (overlong forms, surrogates and code points above
// U+10FFFF are refused, as nlohmann::json refuses them). REQUIRES: i < s.size().
size_t Utf8SequenceLength(absl::string_view s, size_t i);
// True iff all of `s` is well-formed UTF-8.
bool IsValidUtf8(absl::string_view s);

// Whether an output with this key is written as base64 ({"b64": ...}).
bool IsBinaryOutputKey(absl::string_view key);

}  // namespace distflow

#endif  // DISTFLOW_SERVING_TENSOR_JSON_H_
