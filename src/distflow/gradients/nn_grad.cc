// Gradient functions of the neural-network ops: activations (through their
// *Grad helper ops), BiasAdd, Softmax, LogSoftmax, the softmax cross-entropy
// losses (including the second-order path through their backprop output)
// and L2Loss.
#include <string>
#include <vector>

#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/grad_ops.h"
#include "distflow/cc/ops/math_ops.h"
#include "distflow/cc/ops/nn_ops.h"
#include "distflow/core/status.h"
#include "distflow/gradients/grad_helpers.h"
#include "distflow/gradients/grad_op_registry.h"
#include "distflow/gradients/gradients.h"

namespace distflow {
namespace {

absl::Status ReluGradFn(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::ReluGrad(scope, grad_inputs[0], op.input(0)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Relu", ReluGradFn);

absl::Status Relu6GradFn(const Scope& scope, const Operation& op,
                         const std::vector<Output>& grad_inputs,
                         std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::Relu6Grad(scope, grad_inputs[0], op.input(0)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Relu6", Relu6GradFn);

// EluGrad works from the activation's output.
absl::Status EluGradFn(const Scope& scope, const Operation& op,
                       const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::EluGrad(scope, grad_inputs[0], op.output(0)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Elu", EluGradFn);

absl::Status SoftplusGradFn(const Scope& scope, const Operation& op,
                            const std::vector<Output>& grad_inputs,
                            std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::SoftplusGrad(scope, grad_inputs[0], op.input(0)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Softplus", SoftplusGradFn);

absl::Status BiasAddGradFn(const Scope& scope, const Operation& op,
                           const std::vector<Output>& grad_inputs,
                           std::vector<Output>* grad_outputs) {
  std::string data_format;
  DF_RETURN_IF_ERROR(GetNodeAttr(op.node()->attrs(), "data_format", &data_format));
  grad_outputs->push_back(grad_inputs[0]);
  grad_outputs->push_back(
      ops::BiasAddGrad(scope, grad_inputs[0], ops::BiasAddGrad::DataFormat(data_format)));
  return scope.status();
}
REGISTER_GRADIENT_OP("BiasAdd", BiasAddGradFn);

// The sum of `x` over its last dimension, kept.
Output SumLast(const Scope& scope, const Output& x) {
  return ops::Sum(scope, x, -1, ops::Sum::KeepDims(true));
}

// With s = softmax(x): dx = (dy - sum(dy * s)) * s.
Output SoftmaxBackprop(const Scope& scope, const Output& s, const Output& dy) {
  return ops::Mul(scope, ops::Sub(scope, dy, SumLast(scope, ops::Mul(scope, dy, s))), s);
}

absl::Status SoftmaxGrad(const Scope& scope, const Operation& op,
                         const std::vector<Output>& grad_inputs,
                         std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(SoftmaxBackprop(scope, op.output(0), grad_inputs[0]));
  return scope.status();
}
REGISTER_GRADIENT_OP("Softmax", SoftmaxGrad);

// With l = log_softmax(x): dx = dy - sum(dy) * exp(l).
absl::Status LogSoftmaxGrad(const Scope& scope, const Operation& op,
                            const std::vector<Output>& grad_inputs,
                            std::vector<Output>* grad_outputs) {
  const Output& g = grad_inputs[0];
  grad_outputs->push_back(
      ops::Sub(scope, g, ops::Mul(scope, SumLast(scope, g), ops::Exp(scope, op.output(0)))));
  return scope.status();
}
REGISTER_GRADIENT_OP("LogSoftmax", LogSoftmaxGrad);

// The logits' gradient of both cross-entropy ops, whose outputs are the
// per-example loss and backprop = softmax(logits) - labels: the loss's
// gradient scales backprop, and a gradient reaching backprop itself flows
// through the softmax.
Output XentLogitsGrad(const Scope& scope, const Operation& op,
                      const std::vector<Output>& grad_inputs) {
  Output grad;
  if (grad_inputs[0].node() != nullptr) {
    grad = ops::Mul(scope, ops::ExpandDims(scope, grad_inputs[0], -1), op.output(1));
  }
  if (grad_inputs[1].node() != nullptr) {
    const Output through_softmax =
        SoftmaxBackprop(scope, ops::Softmax(scope, op.input(0)), grad_inputs[1]);
    grad = grad.node() == nullptr ? through_softmax : ops::AddV2(scope, grad, through_softmax);
  }
  return grad;
}

// The dense op broadcasts logits against labels, so each gradient is summed
// back to its input's shape. d loss / d labels = -log_softmax(logits), and
// d backprop / d labels = -1.
absl::Status SoftmaxCrossEntropyWithLogitsGrad(const Scope& scope, const Operation& op,
                                               const std::vector<Output>& grad_inputs,
                                               std::vector<Output>* grad_outputs) {
  const Output logits = op.input(0);
  const Output labels = op.input(1);
  grad_outputs->push_back(
      grad::SumToShapeOf(scope, XentLogitsGrad(scope, op, grad_inputs), logits));
  Output labels_grad;
  if (grad_inputs[0].node() != nullptr) {
    labels_grad = ops::Mul(scope, ops::ExpandDims(scope, grad_inputs[0], -1),
                           ops::Neg(scope, ops::LogSoftmax(scope, logits)));
  }
  if (grad_inputs[1].node() != nullptr) {
    const Output minus = ops::Neg(scope, grad_inputs[1]);
    labels_grad = labels_grad.node() == nullptr ? minus : ops::AddV2(scope, labels_grad, minus);
  }
  grad_outputs->push_back(grad::SumToShapeOf(scope, labels_grad, labels));
  return scope.status();
}
REGISTER_GRADIENT_OP("SoftmaxCrossEntropyWithLogits", SoftmaxCrossEntropyWithLogitsGrad);

absl::Status SparseSoftmaxCrossEntropyWithLogitsGrad(const Scope& scope, const Operation& op,
                                                     const std::vector<Output>& grad_inputs,
                                                     std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(XentLogitsGrad(scope, op, grad_inputs));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("SparseSoftmaxCrossEntropyWithLogits",
                     SparseSoftmaxCrossEntropyWithLogitsGrad);

// L2Loss(t) = sum(t^2) / 2: dt = t * dy.
absl::Status L2LossGrad(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::Mul(scope, op.input(0), grad_inputs[0]));
  return scope.status();
}
REGISTER_GRADIENT_OP("L2Loss", L2LossGrad);

REGISTER_NO_GRADIENT_OP("RandomUniform");
REGISTER_NO_GRADIENT_OP("RandomStandardNormal");
REGISTER_NO_GRADIENT_OP("TruncatedNormal");

}  // namespace
}  // namespace distflow
