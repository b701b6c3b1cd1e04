// MomentumOptimizer: accum = momentum * accum + grad; var -= learning_rate *
// accum (with use_nesterov: var -= learning_rate * (grad + momentum *
// accum)), with ResourceApplyMomentum. Each variable gets a zero-initialized
// slot "<var>/Momentum" (run initializers() before training). Like every
// Optimizer, use it from one thread at a time.
#ifndef DISTFLOW_TRAINING_MOMENTUM_H_
#define DISTFLOW_TRAINING_MOMENTUM_H_

#include "distflow/training/learning_rate.h"
#include "distflow/training/optimizer.h"

namespace distflow {

class MomentumOptimizer : public Optimizer {
 public:
  MomentumOptimizer(const Scope& scope, LearningRate learning_rate, double momentum,
                    bool use_nesterov = false);

 protected:
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;

 private:
  const LearningRate learning_rate_;
  const double momentum_;
  const bool use_nesterov_;
};

}  // namespace distflow

#endif  // DISTFLOW_TRAINING_MOMENTUM_H_
