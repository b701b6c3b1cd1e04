#include "distflow/cc/ops/io_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::AllOutputs;
using internal::BuildOp;

SaveV2::SaveV2(const Scope& scope, Input prefix, Input tensor_names, Input shape_and_slices,
               InputList tensors)
    : operation(BuildOp(scope, "SaveV2", {prefix, tensor_names, shape_and_slices, tensors})) {}

RestoreV2::RestoreV2(const Scope& scope, Input prefix, Input tensor_names, Input shape_and_slices,
                     const std::vector<DataType>& dtypes)
    : operation(BuildOp(scope, "RestoreV2", {prefix, tensor_names, shape_and_slices},
                        {{"dtypes", dtypes}})),
      tensors(AllOutputs(operation)) {}

MergeV2Checkpoints::MergeV2Checkpoints(const Scope& scope, Input checkpoint_prefixes,
                                       Input destination_prefix)
    : operation(BuildOp(scope, "MergeV2Checkpoints", {checkpoint_prefixes, destination_prefix})) {}

}  // namespace ops
}  // namespace distflow
