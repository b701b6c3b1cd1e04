// AdamOptimizer (Kingma & Ba), with ResourceApplyAdam: per step t,
//   lr_t = learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t)
//   m = beta1 * m + (1 - beta1) * grad
//   v = beta2 * v + (1 - beta2) * grad^2
//   var -= lr_t * m / (sqrt(v) + epsilon)
// Each variable gets zero-initialized slots "<var>/Adam" (m) and
// "<var>/Adam_1" (v); the optimizer keeps beta1^t and beta2^t in variables
// "beta1_power" and "beta2_power" colocated with the first variable, which
// every step multiplies by beta1 and beta2 after its updates. Run
// initializers() before training. Like every Optimizer, use it from one
// thread at a time.
#ifndef DISTFLOW_TRAINING_ADAM_H_
#define DISTFLOW_TRAINING_ADAM_H_

#include <vector>

#include "distflow/training/learning_rate.h"
#include "distflow/training/optimizer.h"

namespace distflow {

class AdamOptimizer : public Optimizer {
 public:
  explicit AdamOptimizer(const Scope& scope, LearningRate learning_rate = 0.001, double beta1 = 0.9,
                         double beta2 = 0.999, double epsilon = 1e-8);

 protected:
  void Prepare(const Variable& first) override;
  Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) override;
  std::vector<Operation> Finish(const Scope& scope) override;

 private:
  const LearningRate learning_rate_;
  const double beta1_;
  const double beta2_;
  const double epsilon_;
  Variable beta1_power_;
  Variable beta2_power_;
};

}  // namespace distflow

#endif  // DISTFLOW_TRAINING_ADAM_H_
