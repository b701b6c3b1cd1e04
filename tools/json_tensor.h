// Tensors to and from JSON for the command-line tool. A JSON value is a
// number, boolean or string (a scalar) or a nested list; nesting gives the
// shape, which must be rectangular. Pure functions; thread-safe.
#ifndef DISTFLOW_TOOLS_JSON_TENSOR_H_
#define DISTFLOW_TOOLS_JSON_TENSOR_H_

#include <string>

#include "absl/status/statusor.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"
#include "nlohmann/json.hpp"

namespace distflow {

// The tensor of `dtype` that `value` spells. InvalidArgument naming `name`
// for a ragged list, an element of the wrong kind (a fraction or non-number
// for an integer type, a non-boolean for bool, ...), an integer out of the
// type's range, or an unsupported dtype.
absl::StatusOr<Tensor> TensorFromJson(const nlohmann::json& value, DataType dtype,
                                      const std::string& name);

// The deepest list nesting a feed may have (TensorFlow's maximum rank).
inline constexpr int kMaxFeedRank = 254;

// InvalidArgument naming `name` when `text` (JSON) nests lists or objects
// more than `max_depth` deep; checked before parsing so that no parser or
// walker recurses that deep.
absl::Status CheckJsonNesting(absl::string_view text, int max_depth, const std::string& name);

// Output conventions, shared by the JSON and text forms:
//  - float32 (and bfloat16) values print with the fewest digits that read
//    back as the same float32: 0.45, not 0.44999998807907104.
//  - NaN, +Inf and -Inf are the strings "NaN", "Infinity" and "-Infinity" in
//    JSON (protobuf's JSON mapping, Python's json module) and NumPy's nan,
//    inf and -inf in text.
//  - A string that is not valid UTF-8 is written with each invalid byte as
//    the four characters \xNN (and each backslash doubled), as Python
//    prints bytes; valid UTF-8 strings are written unchanged.

// `s` unchanged when it is valid UTF-8, else escaped as described above.
std::string JsonSafeString(absl::string_view s);
// The elements of `t`, flattened in row-major order.
nlohmann::json TensorValuesToJson(const Tensor& t);
// The elements of `t` nested by dimension ("[[1,2],[3,4]]").
nlohmann::json TensorToNestedJson(const Tensor& t);
// The text form: TensorToNestedJson's dump, but with nan, inf and -inf.
std::string TensorToText(const Tensor& t);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_JSON_TENSOR_H_
