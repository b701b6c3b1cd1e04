#include "distflow/cc/ops/nn_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::BuildOp;

BiasAdd::BiasAdd(const Scope& scope, Input value, Input bias)
    : BiasAdd(scope, value, bias, Attrs()) {}
BiasAdd::BiasAdd(const Scope& scope, Input value, Input bias, const Attrs& attrs)
    : operation(BuildOp(scope, "BiasAdd", {value, bias}, {{"data_format", attrs.data_format_}})),
      output(operation.output(0)) {}

Relu::Relu(const Scope& scope, Input features)
    : operation(BuildOp(scope, "Relu", {features})), activations(operation.output(0)) {}
Relu6::Relu6(const Scope& scope, Input features)
    : operation(BuildOp(scope, "Relu6", {features})), activations(operation.output(0)) {}
Elu::Elu(const Scope& scope, Input features)
    : operation(BuildOp(scope, "Elu", {features})), activations(operation.output(0)) {}
Softplus::Softplus(const Scope& scope, Input features)
    : operation(BuildOp(scope, "Softplus", {features})), activations(operation.output(0)) {}

Softmax::Softmax(const Scope& scope, Input logits)
    : operation(BuildOp(scope, "Softmax", {logits})), softmax(operation.output(0)) {}
LogSoftmax::LogSoftmax(const Scope& scope, Input logits)
    : operation(BuildOp(scope, "LogSoftmax", {logits})), logsoftmax(operation.output(0)) {}

SoftmaxCrossEntropyWithLogits::SoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                             Input labels)
    : operation(BuildOp(scope, "SoftmaxCrossEntropyWithLogits", {features, labels})),
      loss(operation.output(0)),
      backprop(operation.output(1)) {}

SparseSoftmaxCrossEntropyWithLogits::SparseSoftmaxCrossEntropyWithLogits(const Scope& scope,
                                                                         Input features,
                                                                         Input labels)
    : operation(BuildOp(scope, "SparseSoftmaxCrossEntropyWithLogits", {features, labels})),
      loss(operation.output(0)),
      backprop(operation.output(1)) {}

L2Loss::L2Loss(const Scope& scope, Input t)
    : operation(BuildOp(scope, "L2Loss", {t})), output(operation.output(0)) {}

}  // namespace ops
}  // namespace distflow
