// Gradients through variables. A ReadVariableOp passes its gradient to the
// variable's handle, so the gradient "with respect to a resource variable"
// is AddSymbolicGradients with the handle as the input (as in TensorFlow).
// The handle-producing ops themselves are leaves.
#include <vector>

#include "distflow/gradients/grad_op_registry.h"

namespace distflow {
namespace {

absl::Status ReadVariableOpGrad(const Scope& /*scope*/, const Operation& /*op*/,
                                const std::vector<Output>& grad_inputs,
                                std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(grad_inputs[0]);
  return absl::OkStatus();
}
REGISTER_GRADIENT_OP("ReadVariableOp", ReadVariableOpGrad);

REGISTER_NO_GRADIENT_OP("VarHandleOp");
REGISTER_NO_GRADIENT_OP("VariableV2");
REGISTER_NO_GRADIENT_OP("VarIsInitializedOp");

}  // namespace
}  // namespace distflow
