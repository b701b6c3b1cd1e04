// The bodies of TensorFlow Serving's :classify and :regress, both ways. A
// request lists tf.Examples as JSON objects of features, with an optional
// "context" whose features every example gets too (an example's own feature
// wins over the context's of the same name):
//   {"signature_name": "...", "context": {"f": 1}, "examples": [{"x": 1.5}, ...]}
// A feature is a value or a flat list of values: strings and {"b64": ...}
// make a bytes_list, integers an int64_list, and any number with a fraction
// or exponent makes the whole list a float_list.
// Results: {"results": [[[label, score], ...], ...]} (classify: per example,
// the pairs of its classes and scores, label "" without classes, score 0
// without scores) and {"results": [value, ...]} (regress).
//
// Pure functions; thread-safe.
#ifndef DISTFLOW_SERVING_EXAMPLE_JSON_H_
#define DISTFLOW_SERVING_EXAMPLE_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/framework/tensor.h"
#include "nlohmann/json.hpp"

namespace distflow {

// The serialized tf.Example protos `body` lists, as a string tensor of
// shape [number of examples]. InvalidArgument naming the example and the
// feature: no "examples" list, an example or context that is not an object,
// a nested list, mixed strings and numbers, an empty list, bad base64.
absl::StatusOr<Tensor> ReadExamples(const nlohmann::json& body);

// The classify response for `num_examples` examples from a signature's
// outputs; either may be null (not both). InvalidArgument when an output's
// shape is not [num_examples, k] (or [num_examples] for scores) or the two
// disagree on k.
absl::StatusOr<std::string> WriteClassifyResults(const Tensor* classes, const Tensor* scores,
                                                 int64_t num_examples);

// The regress response: `outputs` must be float, shape [num_examples] or
// [num_examples, 1]; InvalidArgument otherwise.
absl::StatusOr<std::string> WriteRegressResults(const Tensor& outputs, int64_t num_examples);

}  // namespace distflow

#endif  // DISTFLOW_SERVING_EXAMPLE_JSON_H_
