// Client wrappers for the neural-network ops: activations, BiasAdd, softmax
// and the cross-entropy losses, L2Loss. Each class builds one node when
// constructed (see op_builder.h): T comes from the inputs, optional attrs
// from the nested Attrs, and any error goes to the scope's status, leaving
// the outputs null.
#ifndef DISTFLOW_CC_OPS_NN_OPS_H_
#define DISTFLOW_CC_OPS_NN_OPS_H_

#include <string>
#include <utility>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// `value` plus the 1-D `bias` along the channel dimension.
class BiasAdd {
 public:
  struct Attrs {
    // "NHWC" (default: channels last) or "NCHW" (channels at dimension 1).
    [[nodiscard]] Attrs DataFormat(std::string x) {
      Attrs ret = *this;
      ret.data_format_ = std::move(x);
      return ret;
    }
    std::string data_format_ = "NHWC";
  };
  BiasAdd(const Scope& scope, Input value, Input bias);
  BiasAdd(const Scope& scope, Input value, Input bias, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs DataFormat(std::string x) { return Attrs().DataFormat(std::move(x)); }
  Operation operation;
  Output output;
};

// Activations: max(x, 0); min(max(x, 0), 6); exp(x) - 1 below 0 else x;
// log(exp(x) + 1).

class Relu {
 public:
  Relu(const Scope& scope, Input features);
  operator Output() const { return activations; }
  operator Input() const { return activations; }
  Node* node() const { return activations.node(); }
  Operation operation;
  Output activations;
};

class Relu6 {
 public:
  Relu6(const Scope& scope, Input features);
  operator Output() const { return activations; }
  operator Input() const { return activations; }
  Node* node() const { return activations.node(); }
  Operation operation;
  Output activations;
};

class Elu {
 public:
  Elu(const Scope& scope, Input features);
  operator Output() const { return activations; }
  operator Input() const { return activations; }
  Node* node() const { return activations.node(); }
  Operation operation;
  Output activations;
};

class Softplus {
 public:
  Softplus(const Scope& scope, Input features);
  operator Output() const { return activations; }
  operator Input() const { return activations; }
  Node* node() const { return activations.node(); }
  Operation operation;
  Output activations;
};

// Softmax and its logarithm over the last dimension of `logits`.

class Softmax {
 public:
  Softmax(const Scope& scope, Input logits);
  operator Output() const { return softmax; }
  operator Input() const { return softmax; }
  Node* node() const { return softmax.node(); }
  Operation operation;
  Output softmax;
};

class LogSoftmax {
 public:
  LogSoftmax(const Scope& scope, Input logits);
  operator Output() const { return logsoftmax; }
  operator Input() const { return logsoftmax; }
  Node* node() const { return logsoftmax.node(); }
  Operation operation;
  Output logsoftmax;
};

// Per-example cross-entropy of [batch, classes] logits against label
// distributions of the same shape, and its gradient.
class SoftmaxCrossEntropyWithLogits {
 public:
  SoftmaxCrossEntropyWithLogits(const Scope& scope, Input features, Input labels);
  Operation operation;
  Output loss;
  Output backprop;
};

// The same against class indices ([batch] int32 or int64 labels).
class SparseSoftmaxCrossEntropyWithLogits {
 public:
  SparseSoftmaxCrossEntropyWithLogits(const Scope& scope, Input features, Input labels);
  Operation operation;
  Output loss;
  Output backprop;
};

// sum(t ** 2) / 2 as a scalar.
class L2Loss {
 public:
  L2Loss(const Scope& scope, Input t);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_NN_OPS_H_
