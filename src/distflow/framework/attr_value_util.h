// Building, checking, printing and parsing AttrValue protos.
#ifndef DISTFLOW_FRAMEWORK_ATTR_VALUE_UTIL_H_
#define DISTFLOW_FRAMEWORK_ATTR_VALUE_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "distflow/attr_value.pb.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/types.h"

namespace distflow {

// Stores `value` in `out`, replacing what was there.
void SetAttrValue(absl::string_view value, AttrValue* out);
void SetAttrValue(const char* value, AttrValue* out);
void SetAttrValue(const std::string& value, AttrValue* out);
void SetAttrValue(int64_t value, AttrValue* out);
void SetAttrValue(int32_t value, AttrValue* out);
void SetAttrValue(float value, AttrValue* out);
void SetAttrValue(double value, AttrValue* out);
void SetAttrValue(bool value, AttrValue* out);
void SetAttrValue(DataType value, AttrValue* out);
void SetAttrValue(const TensorShape& value, AttrValue* out);
void SetAttrValue(const PartialTensorShape& value, AttrValue* out);
void SetAttrValue(const TensorShapeProto& value, AttrValue* out);
void SetAttrValue(const Tensor& value, AttrValue* out);
void SetAttrValue(const TensorProto& value, AttrValue* out);
void SetAttrValue(const NameAttrList& value, AttrValue* out);
void SetAttrValue(const AttrValue& value, AttrValue* out);
void SetAttrValue(absl::Span<const std::string> value, AttrValue* out);
void SetAttrValue(absl::Span<const int64_t> value, AttrValue* out);
void SetAttrValue(absl::Span<const int32_t> value, AttrValue* out);
void SetAttrValue(absl::Span<const float> value, AttrValue* out);
void SetAttrValue(absl::Span<const bool> value, AttrValue* out);
void SetAttrValue(absl::Span<const DataType> value, AttrValue* out);
void SetAttrValue(absl::Span<const TensorShape> value, AttrValue* out);
void SetAttrValue(absl::Span<const PartialTensorShape> value, AttrValue* out);
void SetAttrValue(absl::Span<const Tensor> value, AttrValue* out);
template <typename T>
void SetAttrValue(const std::vector<T>& value, AttrValue* out) {
  SetAttrValue(absl::Span<const T>(value), out);
}
template <typename T>
void SetAttrValue(std::initializer_list<T> value, AttrValue* out) {
  SetAttrValue(absl::Span<const T>(value.begin(), value.size()), out);
}

// OK iff `value` holds an attr of OpDef type `type` ("int", "list(type)", ...).
absl::Status AttrValueHasType(const AttrValue& value, absl::string_view type);

// Parses the text after "=" in an OpDef attr spec (e.g. "false", "1.5",
// "'SAME'", "DT_FLOAT", "[1, 2]", "{ unknown_rank: true }") as `type`.
absl::Status ParseAttrValue(absl::string_view type, absl::string_view text, AttrValue* out);

// A short human-readable form: 5, 1.5, "abc", float32, [2,3], [1, 2].
std::string SummarizeAttrValue(const AttrValue& value);

bool AreAttrValuesEqual(const AttrValue& a, const AttrValue& b);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_ATTR_VALUE_UTIL_H_
