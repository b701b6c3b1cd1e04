// Variable: a resource variable in a client graph, as TensorFlow's
// ResourceVariable builds it. Constructing one adds a VarHandleOp (named by
// the scope; its shared_name is that node name, so every session and every
// worker of a cluster refers to the same variable) and an initializer, an
// AssignVariableOp of the initial value colocated with the handle (so a
// device function such as ReplicaDeviceSetter places it with the variable).
// Nothing is initialized until the initializer runs.
//
// A Variable is a cheap value referring to nodes of the scope's graph; it is
// null (handle().node() == nullptr) when building it failed, the error being
// recorded in the scope. Not thread-safe, like Scope.
#ifndef DISTFLOW_TRAINING_VARIABLE_H_
#define DISTFLOW_TRAINING_VARIABLE_H_

#include <string>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {

class Variable {
 public:
  Variable() = default;
  // A variable holding `initial_value` once initialized; its dtype and
  // shape are the initial value's (the shape as far as shape inference
  // knows it).
  Variable(const Scope& scope, const Input& initial_value);

  // The DT_RESOURCE handle: what ReadVariableOp, AssignVariableOp and the
  // ResourceApply* ops take, and what AddSymbolicGradients differentiates
  // with respect to.
  const Output& handle() const { return handle_; }
  // The AssignVariableOp that gives the variable its initial value.
  const Operation& initializer() const { return initializer_; }
  const Output& initial_value() const { return initial_value_; }
  DataType dtype() const { return dtype_; }
  const PartialTensorShape& shape() const { return shape_; }
  // The handle node's name ("w", "layer/w").
  const std::string& name() const { return handle_.node()->name(); }

  // A ReadVariableOp of the current value, built in `scope` (its name and
  // control dependencies) but colocated with the variable: the value, not
  // the handle, travels to the device that uses it.
  Output Read(const Scope& scope) const;
  // AssignVariableOp / AssignAddVariableOp of `value`, built in `scope` and
  // colocated with the variable like Read.
  Operation Assign(const Scope& scope, const Input& value) const;
  Operation AssignAdd(const Scope& scope, const Input& value) const;

 private:
  Scope AtVariable(const Scope& scope) const;

  Output handle_;
  Operation initializer_;
  Output initial_value_;
  DataType dtype_ = DT_INVALID;
  PartialTensorShape shape_;
};

// The training step counter: an int64 Variable named "global_step" starting
// at 0. Optimizer::ApplyGradients increments it once per step.
Variable CreateGlobalStep(const Scope& scope);

}  // namespace distflow

#endif  // DISTFLOW_TRAINING_VARIABLE_H_
