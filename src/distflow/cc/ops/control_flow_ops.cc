#include "distflow/cc/ops/control_flow_ops.h"

#include <string>

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

Enter::Enter(const Scope& scope, Input data, absl::string_view frame_name)
    : Enter(scope, data, frame_name, Attrs()) {}
Enter::Enter(const Scope& scope, Input data, absl::string_view frame_name, const Attrs& attrs)
    : operation(BuildOp(scope, "Enter", {data},
                        {{"frame_name", std::string(frame_name)},
                         {"is_constant", attrs.is_constant_},
                         {"parallel_iterations", attrs.parallel_iterations_}})),
      output(operation.output(0)) {}

Exit::Exit(const Scope& scope, Input data)
    : operation(BuildOp(scope, "Exit", {data})), output(operation.output(0)) {}

NextIteration::NextIteration(const Scope& scope, Input data)
    : operation(BuildOp(scope, "NextIteration", {data})), output(operation.output(0)) {}

LoopCond::LoopCond(const Scope& scope, Input input)
    : operation(BuildOp(scope, "LoopCond", {input})), output(operation.output(0)) {}

}  // namespace ops
}  // namespace distflow
