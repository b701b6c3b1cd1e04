#include "distflow/cc/ops/parsing_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::AllOutputs;
using internal::BuildOp;

ParseExample::ParseExample(const Scope& scope, Input serialized, Input names, InputList sparse_keys,
                           InputList dense_keys, InputList dense_defaults,
                           const std::vector<DataType>& sparse_types,
                           const std::vector<PartialTensorShape>& dense_shapes)
    : operation(BuildOp(scope, "ParseExample",
                        {serialized, names, sparse_keys, dense_keys, dense_defaults},
                        {{"sparse_types", sparse_types}, {"dense_shapes", dense_shapes}})) {
  const OutputList all = AllOutputs(operation);
  const size_t num_sparse = sparse_types.size();
  if (all.size() != 3 * num_sparse + dense_shapes.size()) return;  // the scope holds the error
  auto take = [&all](size_t from, size_t n) {
    return OutputList(all.begin() + from, all.begin() + from + n);
  };
  sparse_indices = take(0, num_sparse);
  sparse_values = take(num_sparse, num_sparse);
  sparse_shapes = take(2 * num_sparse, num_sparse);
  dense_values = take(3 * num_sparse, dense_shapes.size());
}

}  // namespace ops
}  // namespace distflow
