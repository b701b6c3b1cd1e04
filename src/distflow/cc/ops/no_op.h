// Client wrapper for NoOp: a node that does nothing, used as a target that
// groups control dependencies (build it in a scope WithControlDependencies).
#ifndef DISTFLOW_CC_OPS_NO_OP_H_
#define DISTFLOW_CC_OPS_NO_OP_H_

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

class NoOp {
 public:
  explicit NoOp(const Scope& scope);
  operator Operation() const { return operation; }
  Node* node() const { return operation.node(); }
  Operation operation;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_NO_OP_H_
