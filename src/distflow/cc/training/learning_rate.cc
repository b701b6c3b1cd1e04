#include "distflow/cc/training/learning_rate.h"

#include <cmath>

#include "distflow/cc/ops/math_ops.h"
#include "distflow/core/status.h"
#include "distflow/gradients/grad_helpers.h"

namespace distflow {

Output LearningRate::ToTensor(const Scope& scope, DataType dtype) const {
  if (tensor_.node() == nullptr) return grad::ScalarConst(scope, value_, dtype);
  if (tensor_.type() == dtype) return tensor_;
  return ops::Cast(scope, tensor_, dtype);
}

Output PolynomialDecay(const Scope& scope, const Output& step, double initial,
                       int64_t decay_steps, double end, double power) {
  const Scope s = scope.NewSubScope("PolynomialDecay");
  if (decay_steps <= 0) {
    s.UpdateStatus(
        errors::InvalidArgument("PolynomialDecay needs decay_steps > 0, got ", decay_steps));
  } else if (!std::isfinite(initial) || !std::isfinite(end) || initial < 0 || end < 0) {
    s.UpdateStatus(errors::InvalidArgument(
        "PolynomialDecay needs finite rates >= 0, got initial ", initial, " and end ", end));
  } else if (!(power > 0) || !std::isfinite(power)) {
    s.UpdateStatus(errors::InvalidArgument("PolynomialDecay needs a power > 0, got ", power));
  }
  const Output at = step.type() == DT_FLOAT ? step : Output(ops::Cast(s, step, DT_FLOAT));
  const auto f = [&s](double v) { return grad::ScalarConst(s, v, DT_FLOAT); };
  const Output clipped = ops::Minimum(s, at, f(static_cast<double>(decay_steps)));
  const Output left = ops::Sub(s, f(1), ops::RealDiv(s, clipped, f(static_cast<double>(decay_steps))));
  const Output shaped = power == 1.0 ? left : Output(ops::Pow(s, left, f(power)));
  return ops::AddV2(s, ops::Mul(s, f(initial - end), shaped), f(end));
}

}  // namespace distflow
