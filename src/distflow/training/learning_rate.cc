#include "distflow/training/learning_rate.h"

#include <cmath>

#include "distflow/cc/const_op.h"
#include "distflow/cc/ops/math_ops.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

Output FloatConst(const Scope& scope, double v) { return ops::ScalarConst(scope, v, DT_FLOAT); }

// min(step, decay_steps) / decay_steps as a float scalar, after checking
// what every schedule needs: decay_steps > 0 and a finite rate >= 0.
Output DecayedFraction(const Scope& s, const Output& step, double initial, int64_t decay_steps,
                       const char* schedule) {
  if (decay_steps <= 0) {
    s.UpdateStatus(errors::InvalidArgument(schedule, " needs decay_steps > 0, got ", decay_steps));
  } else if (!std::isfinite(initial) || initial < 0) {
    s.UpdateStatus(
        errors::InvalidArgument(schedule, " needs a finite rate >= 0, got initial ", initial));
  }
  const Output at = step.type() == DT_FLOAT ? step : Output(ops::Cast(s, step, DT_FLOAT));
  const double steps = static_cast<double>(decay_steps);
  return ops::RealDiv(s, ops::Minimum(s, at, FloatConst(s, steps)), FloatConst(s, steps));
}

}  // namespace

Output LearningRate::ToTensor(const Scope& scope, DataType dtype) const {
  if (tensor_.node() == nullptr) return ops::ScalarConst(scope, value_, dtype);
  if (tensor_.type() == dtype) return tensor_;
  return ops::Cast(scope, tensor_, dtype);
}

Output PolynomialDecay(const Scope& scope, const Output& step, double initial, int64_t decay_steps,
                       double end, double power) {
  const Scope s = scope.NewSubScope("PolynomialDecay");
  const Output done = DecayedFraction(s, step, initial, decay_steps, "PolynomialDecay");
  if (!std::isfinite(end) || end < 0) {
    s.UpdateStatus(
        errors::InvalidArgument("PolynomialDecay needs a finite end rate >= 0, got ", end));
  } else if (!(power > 0) || !std::isfinite(power)) {
    s.UpdateStatus(errors::InvalidArgument("PolynomialDecay needs a power > 0, got ", power));
  }
  const Output left = ops::Sub(s, FloatConst(s, 1), done);
  const Output shaped = power == 1.0 ? left : Output(ops::Pow(s, left, FloatConst(s, power)));
  return ops::AddV2(s, ops::Mul(s, FloatConst(s, initial - end), shaped), FloatConst(s, end));
}

Output CosineDecay(const Scope& scope, const Output& step, double initial, int64_t decay_steps,
                   double alpha) {
  const Scope s = scope.NewSubScope("CosineDecay");
  const Output done = DecayedFraction(s, step, initial, decay_steps, "CosineDecay");
  if (!(alpha >= 0 && alpha <= 1)) {
    s.UpdateStatus(errors::InvalidArgument("CosineDecay needs alpha in [0, 1], got ", alpha));
  }
  constexpr double kPi = 3.14159265358979323846;
  // (1 + cos(pi * done)) / 2, scaled into [alpha, 1].
  const Output half_cosine =
      ops::Mul(s, FloatConst(s, 0.5),
               ops::AddV2(s, FloatConst(s, 1), ops::Cos(s, ops::Mul(s, FloatConst(s, kPi), done))));
  const Output scaled =
      ops::AddV2(s, ops::Mul(s, FloatConst(s, 1 - alpha), half_cosine), FloatConst(s, alpha));
  return ops::Mul(s, FloatConst(s, initial), scaled);
}

}  // namespace distflow
