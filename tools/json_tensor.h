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
absl::StatusOr<Tensor> TensorFromJson(const nlohmann::json& value,
                                      DataType dtype, const std::string& name);

// The elements of `t`, flattened in row-major order.
nlohmann::json TensorValuesToJson(const Tensor& t);
// The elements of `t` nested by dimension ("[[1,2],[3,4]]").
nlohmann::json TensorToNestedJson(const Tensor& t);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_JSON_TENSOR_H_
