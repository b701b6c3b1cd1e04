#include "distflow/cc/ops/control_flow_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::BuildOp;

Switch::Switch(const Scope& scope, Input data, Input pred)
    : operation(BuildOp(scope, "Switch", {data, pred})),
      output_false(operation.output(0)),
      output_true(operation.output(1)) {}

Merge::Merge(const Scope& scope, InputList inputs)
    : operation(BuildOp(scope, "Merge", {inputs})),
      output(operation.output(0)),
      value_index(operation.output(1)) {}

}  // namespace ops
}  // namespace distflow
