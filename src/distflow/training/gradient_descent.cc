#include "distflow/training/gradient_descent.h"

#include "distflow/cc/op_builder.h"

namespace distflow {

GradientDescentOptimizer::GradientDescentOptimizer(const Scope& scope, LearningRate learning_rate)
    : Optimizer(scope, "GradientDescent"), learning_rate_(learning_rate) {}

Operation GradientDescentOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                               const Variable& var) {
  const Input handle(var.handle());
  const Input alpha(learning_rate_.ToTensor(scope, var.dtype()));
  const Input delta(grad);
  return Operation(
      ops::internal::BuildOp(scope, "ResourceApplyGradientDescent", {handle, alpha, delta}));
}

}  // namespace distflow
