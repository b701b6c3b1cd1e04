// LearningRate: what an Optimizer scales its updates by. Either a number,
// as tf.compat.v1.train's optimizers take a float, or a scalar tensor the
// graph computes at every step, as they take a tensor: a schedule of the
// global step such as PolynomialDecay or CosineDecay below. It converts implicitly from
// both, so AdamOptimizer(scope, 0.001) and
// AdamOptimizer(scope, PolynomialDecay(...)) read as they would in
// TensorFlow.
//
// A schedule's ops run where their inputs are (colocate them with the
// global step); each update op reads the rate once per step.
#ifndef DISTFLOW_TRAINING_LEARNING_RATE_H_
#define DISTFLOW_TRAINING_LEARNING_RATE_H_

#include <cstdint>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {

class LearningRate {
 public:
  LearningRate(double value) : value_(value) {}            // NOLINT: implicit on purpose
  LearningRate(const Output& tensor) : tensor_(tensor) {}  // NOLINT: implicit on purpose

  // The rate as a scalar of `dtype` built in `scope`: a constant, the
  // tensor itself, or the tensor cast to `dtype`.
  Output ToTensor(const Scope& scope, DataType dtype) const;

 private:
  double value_ = 0;
  Output tensor_;  // null for a constant rate
};

// TensorFlow's PolynomialDecay schedule (without cycling): with
// s = min(step, decay_steps),
//   rate = (initial - end) * (1 - s / decay_steps)^power + end,
// a float scalar. `step` is an integer or float scalar, usually the global
// step's value; past decay_steps the rate stays at `end`. power 1 is a
// straight line from `initial` to `end`. A non-positive decay_steps, a
// negative or non-finite rate or a non-positive power is InvalidArgument
// in the scope's status.
Output PolynomialDecay(const Scope& scope, const Output& step, double initial, int64_t decay_steps,
                       double end, double power = 1.0);

// TensorFlow's CosineDecay schedule (without warm-up): with
// s = min(step, decay_steps),
//   rate = initial * ((1 - alpha) * (1 + cos(pi * s / decay_steps)) / 2 + alpha),
// a float scalar falling from `initial` to initial * alpha along half a
// cosine. A non-positive decay_steps, a negative or non-finite rate or an
// alpha outside [0, 1] is InvalidArgument in the scope's status.
Output CosineDecay(const Scope& scope, const Output& step, double initial, int64_t decay_steps,
                   double alpha = 0.0);

}  // namespace distflow

#endif  // DISTFLOW_TRAINING_LEARNING_RATE_H_
