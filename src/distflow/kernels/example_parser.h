// Parses serialized tf.Example records (proto/distflow/example.proto) into
// the tensors TensorFlow's ParseExample and ParseExampleV2 output: one dense
// tensor per dense key (the feature's values, or its default when an example
// lacks it), one sparse (indices, values, dense shape) triple per sparse key,
// and one ragged (values, row splits) pair per ragged key.
//
// Semantics, as TensorFlow's:
//  - serialized is a scalar (one example) or a vector (a batch of B). Outputs
//    for a vector carry the batch as their first dimension; for a scalar they
//    have none (ragged row splits are [0, n] then).
//  - A fixed-length dense feature must hold exactly as many values as its
//    shape has elements; one whose example lacks it takes its default, and
//    is an error when it has none (a default with no elements).
//  - A variable-length dense feature (shape [-1, d1, ...]) holds any whole
//    number of rows of d1*... values; the batch is padded to its longest
//    example with the default, a scalar (zero or "" when there is none).
//  - A feature whose list kind differs from the key's dtype is an error; a
//    feature with no list set counts as missing.
// Every error is InvalidArgument naming the example (index and name) and the
// feature key; sizes are checked before anything is allocated, so absurd
// shapes are ResourceExhausted, never a crash. Stateless; thread-safe.
#ifndef DISTFLOW_KERNELS_EXAMPLE_PARSER_H_
#define DISTFLOW_KERNELS_EXAMPLE_PARSER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {

// What to extract from each example. Dtypes are DT_FLOAT, DT_INT64 or
// DT_STRING (the three tf.train.Feature lists); ragged splits DT_INT32 or
// DT_INT64.
struct ExampleParserConfig {
  struct Dense {
    std::string key;
    DataType dtype = DT_FLOAT;
    // Fully defined, or [-1, d1, ...] for a variable-length feature.
    PartialTensorShape shape;
    // Shaped like `shape` (same element count) for a fixed-length feature, a
    // scalar for a variable-length one; no elements: none.
    Tensor default_value;
  };
  struct Sparse {
    std::string key;
    DataType dtype = DT_FLOAT;
  };
  struct Ragged {
    std::string key;
    DataType dtype = DT_FLOAT;
    DataType splits_dtype = DT_INT64;
  };
  std::vector<Dense> dense;
  std::vector<Sparse> sparse;
  std::vector<Ragged> ragged;
};

// The parsed batch; vectors are indexed like the config's lists.
struct ParsedExamples {
  std::vector<Tensor> sparse_indices;  // int64 [n, rank(serialized) + 1]
  std::vector<Tensor> sparse_values;   // [n]
  std::vector<Tensor> sparse_shapes;   // int64 [rank(serialized) + 1]
  std::vector<Tensor> dense_values;
  std::vector<Tensor> ragged_values;  // [n]
  std::vector<Tensor> ragged_splits;  // [B + 1]
};

// Parses `serialized` (string, rank 0 or 1). `names` (string) is empty or
// shaped like `serialized` and names the examples in error messages.
// InvalidArgument for a bad config (a dtype no list holds, a shape that is
// neither fully defined nor variable-length, a default of the wrong size),
// a record that is not a tf.Example, or a feature that does not fit its key.
absl::StatusOr<ParsedExamples> ParseExamples(const ExampleParserConfig& config,
                                             const Tensor& serialized, const Tensor& names);

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_EXAMPLE_PARSER_H_
