// Client wrappers for conditional control flow: Switch and Merge, the pair
// tf.cond builds. A value routed by Switch reaches only the branch its
// predicate picks; the other branch's nodes are dead and do not run; Merge
// joins the branches.
#ifndef DISTFLOW_CC_OPS_CONTROL_FLOW_OPS_H_
#define DISTFLOW_CC_OPS_CONTROL_FLOW_OPS_H_

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// `data` on output_true when `pred` (a bool scalar) is true, else on
// output_false; the other output is dead.
class Switch {
 public:
  Switch(const Scope& scope, Input data, Input pred);
  Operation operation;
  Output output_false;
  Output output_true;
};

// The first of `inputs` that is alive, and its index; dead when all are.
class Merge {
 public:
  Merge(const Scope& scope, InputList inputs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
  Output value_index;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_CONTROL_FLOW_OPS_H_
