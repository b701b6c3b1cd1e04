// Client wrapper for ParseExample: serialized tf.Example records into
// sparse and dense tensors (kernels/example_parser.h says how). Builds one
// node when constructed; errors go to the scope.
#ifndef DISTFLOW_CC_OPS_PARSING_OPS_H_
#define DISTFLOW_CC_OPS_PARSING_OPS_H_

#include <vector>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// Op ParseExample: `serialized` a string vector, `names` empty or one name
// per record; one scalar key per sparse and dense feature; one default per
// dense key (empty: the feature is required) of the dense feature's dtype.
class ParseExample {
 public:
  ParseExample(const Scope& scope, Input serialized, Input names, InputList sparse_keys,
               InputList dense_keys, InputList dense_defaults,
               const std::vector<DataType>& sparse_types,
               const std::vector<PartialTensorShape>& dense_shapes);
  Operation operation;
  OutputList sparse_indices, sparse_values, sparse_shapes, dense_values;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_PARSING_OPS_H_
