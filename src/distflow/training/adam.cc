#include "distflow/training/adam.h"

#include "distflow/cc/op_builder.h"
#include "distflow/cc/ops/math_ops.h"

namespace distflow {

AdamOptimizer::AdamOptimizer(const Scope& scope, LearningRate learning_rate, double beta1,
                             double beta2, double epsilon)
    : Optimizer(scope, "Adam"),
      learning_rate_(learning_rate),
      beta1_(beta1),
      beta2_(beta2),
      epsilon_(epsilon) {}

void AdamOptimizer::Prepare(const Variable& first) {
  if (beta1_power_.handle().node() != nullptr) return;
  beta1_power_ = CreateNonSlot(first, "beta1_power", beta1_);
  beta2_power_ = CreateNonSlot(first, "beta2_power", beta2_);
}

Operation AdamOptimizer::ApplyDense(const Scope& scope, const Output& grad, const Variable& var) {
  const Variable m = GetSlot(var, "");
  const Variable v = GetSlot(var, "_1");
  const DataType t = var.dtype();
  const Input handle(var.handle());
  const Input m_handle(m.handle());
  const Input v_handle(v.handle());
  const Input beta1_power(beta1_power_.Read(scope));
  const Input beta2_power(beta2_power_.Read(scope));
  const Input lr(learning_rate_.ToTensor(scope, t));
  const Input beta1(Constant(scope, beta1_, t));
  const Input beta2(Constant(scope, beta2_, t));
  const Input epsilon(Constant(scope, epsilon_, t));
  const Input g(grad);
  return Operation(ops::internal::BuildOp(
      scope, "ResourceApplyAdam",
      {handle, m_handle, v_handle, beta1_power, beta2_power, lr, beta1, beta2, epsilon, g}));
}

std::vector<Operation> AdamOptimizer::Finish(const Scope& scope) {
  std::vector<Operation> ops;
  for (auto [power, beta] :
       {std::make_pair(&beta1_power_, beta1_), std::make_pair(&beta2_power_, beta2_)}) {
    const Scope s = scope.ColocateWith(power->handle());
    const Output next = ops::Mul(s, power->Read(s), Constant(s, beta, power->dtype()));
    ops.push_back(power->Assign(s, next));
  }
  return ops;
}

}  // namespace distflow
