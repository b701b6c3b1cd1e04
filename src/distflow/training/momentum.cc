#include "distflow/training/momentum.h"

#include "distflow/cc/op_builder.h"

namespace distflow {

MomentumOptimizer::MomentumOptimizer(const Scope& scope, LearningRate learning_rate,
                                     double momentum, bool use_nesterov)
    : Optimizer(scope, "Momentum"),
      learning_rate_(learning_rate),
      momentum_(momentum),
      use_nesterov_(use_nesterov) {}

Operation MomentumOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                        const Variable& var) {
  const Variable accum = GetSlot(var, "");
  const Input handle(var.handle());
  const Input accum_handle(accum.handle());
  const Input lr(learning_rate_.ToTensor(scope, var.dtype()));
  const Input g(grad);
  const Input momentum(Constant(scope, momentum_, var.dtype()));
  return Operation(ops::internal::BuildOp(scope, "ResourceApplyMomentum",
                                          {handle, accum_handle, lr, g, momentum},
                                          {{"use_nesterov", use_nesterov_}}));
}

}  // namespace distflow
