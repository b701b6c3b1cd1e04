// The body of TensorFlow Serving's :predict, both ways. A request gives its
// inputs in one of two formats:
//  - row ("instances"): a list with one entry per example, stacked along a
//    new first dimension; an entry is the value of the signature's only
//    input, or an object naming inputs ({"x": ..., "y": ...}), the same
//    names in every entry;
//  - columnar ("inputs"): the value of the only input, or an object naming
//    inputs, each with its whole shape.
// The response answers in the request's format: "predictions" (one entry per
// row: the only output's row, or an object of every output's row) or
// "outputs" (the only output's value, or an object of every output).
//
// Pure functions; thread-safe.
#ifndef DISTFLOW_SERVING_PREDICT_JSON_H_
#define DISTFLOW_SERVING_PREDICT_JSON_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/framework/tensor.h"
#include "distflow/meta_graph.pb.h"
#include "nlohmann/json.hpp"

namespace distflow {

enum class JsonFormat { kRow, kColumnar };

struct PredictInputs {
  JsonFormat format = JsonFormat::kRow;
  // Signature input key -> value.
  std::vector<std::pair<std::string, Tensor>> inputs;
};

// The inputs `body` gives for `signature`, typed by the signature's dtypes;
// `body`'s values are moved out. InvalidArgument naming what was wrong: both
// or neither of "instances" and "inputs", an empty or non-list "instances",
// bare values for a signature with several inputs, an input the signature
// does not have, instances naming different inputs, ragged values, elements
// of the wrong kind for the input's dtype.
absl::StatusOr<PredictInputs> ReadPredictInputs(nlohmann::json& body,
                                                const SignatureDef& signature);

// The response body for output `keys` with values `outputs` (same order).
// InvalidArgument in the row format when an output is a scalar or the
// outputs disagree on their number of rows (the columnar format takes any).
absl::StatusOr<std::string> WritePredictOutputs(JsonFormat format,
                                                const std::vector<std::string>& keys,
                                                const std::vector<Tensor>& outputs);

}  // namespace distflow

#endif  // DISTFLOW_SERVING_PREDICT_JSON_H_
