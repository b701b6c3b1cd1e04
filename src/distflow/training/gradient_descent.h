// GradientDescentOptimizer: var -= learning_rate * grad, with
// ResourceApplyGradientDescent. It creates no variables of its own. Like
// every Optimizer, use it from one thread at a time.
#ifndef DISTFLOW_TRAINING_GRADIENT_DESCENT_H_
#define DISTFLOW_TRAINING_GRADIENT_DESCENT_H_

#include "distflow/training/learning_rate.h"
#include "distflow/training/optimizer.h"

namespace distflow {

class GradientDescentOptimizer : public Optimizer {
 public:
  GradientDescentOptimizer(const Scope& scope, LearningRate learning_rate);

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;

 private:
  const LearningRate learning_rate_;
};

}  // namespace distflow

#endif  // DISTFLOW_TRAINING_GRADIENT_DESCENT_H_
