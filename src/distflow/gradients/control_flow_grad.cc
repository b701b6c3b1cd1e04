// Gradient functions of control flow. For a tf.cond: the gradient of a Merge
// goes back to the input that was alive (a Switch on value_index routes it,
// the other inputs' gradients are dead), and the gradient of a Switch is the
// Merge of its two outputs' gradients (only the taken branch's is alive).
// Loops are not differentiated yet: Enter, Exit and NextIteration fail with
// Unimplemented naming the node and its loop frame. LoopCond's boolean has
// no gradient.
#include <string>
#include <vector>

#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/control_flow_ops.h"
#include "distflow/cc/ops/math_ops.h"
#include "distflow/core/status.h"
#include "distflow/gradients/grad_op_registry.h"
#include "distflow/gradients/gradients.h"

namespace distflow {
namespace {

absl::Status SwitchGrad(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  // An output no gradient reached contributes zero, alive exactly when that
  // output is, so the Merge still sees one live input.
  std::vector<Output> grads = grad_inputs;
  for (int k = 0; k < 2; ++k) {
    if (grads[k].node() == nullptr) grads[k] = ops::ZerosLike(scope, op.output(k));
  }
  ops::Merge merge(scope, {grads[0], grads[1]});
  *grad_outputs = {merge.output, NoGradient()};
  return scope.status();
}
REGISTER_GRADIENT_OP("Switch", SwitchGrad);

absl::Status MergeGrad(const Scope& scope, const Operation& op,
                       const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->clear();
  const Output value_index = op.output(1);
  for (int i = 0; i < op.num_inputs(); ++i) {
    ops::Equal taken(scope, value_index, i);
    ops::Switch route(scope, grad_inputs[0], taken);
    grad_outputs->push_back(route.output_true);
  }
  return scope.status();
}
REGISTER_GRADIENT_OP("Merge", MergeGrad);

absl::Status LoopGrad(const Scope& /*scope*/, const Operation& op,
                      const std::vector<Output>& /*grad_inputs*/,
                      std::vector<Output>* /*grad_outputs*/) {
  std::string frame;
  const Node* n = op.node();
  if (n->type_string() == "Enter" && GetNodeAttr(n->attrs(), "frame_name", &frame).ok()) {
    return errors::Unimplemented("gradients of while loops are not supported: node '", n->name(),
                                 "' enters loop '", frame, "'");
  }
  return errors::Unimplemented("gradients of while loops are not supported: node '", n->name(),
                               "' (", n->type_string(), ") is part of a loop");
}
REGISTER_GRADIENT_OP("Enter", LoopGrad);
REGISTER_GRADIENT_OP("Exit", LoopGrad);
REGISTER_GRADIENT_OP("NextIteration", LoopGrad);
REGISTER_NO_GRADIENT_OP("LoopCond");

}  // namespace
}  // namespace distflow
