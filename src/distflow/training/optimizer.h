// Optimizer: the client-side training loop step, as TensorFlow's
// tf.compat.v1.train.Optimizer builds it. ComputeGradients differentiates a
// loss with respect to resource Variables; ApplyGradients builds one update
// op per variable (a ResourceApply* op, colocated with the variable, so a
// ReplicaDeviceSetter puts it on the variable's parameter server) and
// returns the op that runs a whole step; Minimize does both.
//
// Subclasses (GradientDescentOptimizer, MomentumOptimizer, AdamOptimizer)
// say how one variable is updated. Variables an optimizer creates for itself
// (slots such as momentum accumulators, Adam's beta powers) are colocated
// with the variable they serve and must be initialized before the first
// step: run initializers() along with the model's variable initializers.
//
// An Optimizer builds into the Scope it was given; like Scope, it must be
// used from one thread at a time.
#ifndef DISTFLOW_TRAINING_OPTIMIZER_H_
#define DISTFLOW_TRAINING_OPTIMIZER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/training/variable.h"

namespace distflow {

struct GradAndVar {
  // The loss's gradient with respect to the variable's value; null when the
  // loss does not depend on it.
  Output gradient;
  Variable variable;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // The gradient of `loss` for each of `var_list`, in order, taken through
  // the variables' ReadVariableOps (AddSymbolicGradients with respect to
  // the handles), built under the sub-scope "gradients". InvalidArgument
  // for a null loss or variable; AddSymbolicGradients' errors otherwise.
  absl::StatusOr<std::vector<GradAndVar>> ComputeGradients(const Output& loss,
                                                           const std::vector<Variable>& var_list);

  // Builds the update of every variable that has a gradient and returns the
  // op that performs one step: with `global_step`, an AssignAddVariableOp
  // incrementing it by 1 that runs after every update; otherwise a NoOp
  // that depends on every update. InvalidArgument, naming the variables,
  // when none has a gradient; the scope's error when building fails.
  // Every op of the update runs after the ops in `after` (the previous step
  // of a graph that runs several steps in one call, so that state shared by
  // all variables, such as Adam's beta powers, is read after its update).
  absl::StatusOr<Operation> ApplyGradients(const std::vector<GradAndVar>& grads_and_vars,
                                           const Variable* global_step = nullptr,
                                           const std::vector<Operation>& after = {});

  // ComputeGradients then ApplyGradients.
  absl::StatusOr<Operation> Minimize(const Output& loss, const std::vector<Variable>& var_list,
                                     const Variable* global_step = nullptr);

  // The initializers of the variables this optimizer created.
  const std::vector<Operation>& initializers() const { return initializers_; }
  // The variables this optimizer created (slots, Adam's beta powers), in
  // creation order: what a checkpoint needs besides the model's to resume
  // training exactly.
  const std::vector<Variable>& variables() const { return variables_; }
  // "GradientDescent", "Momentum", "Adam": the sub-scope of its ops and the
  // suffix of its slots' names.
  const std::string& name() const { return name_; }

 protected:
  Optimizer(const Scope& scope, std::string name);

  // Builds, in `scope` (colocated with `var`), the op updating `var` by
  // `grad`.
  virtual Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) = 0;
  // Runs once per ApplyGradients before any ApplyDense; `first` is the
  // first variable that has a gradient. Adam creates its beta powers here.
  virtual void Prepare(const Variable& /*first*/) {}
  // Builds the ops that must follow every update of a step, in `scope`,
  // which depends on all of them. Adam advances its beta powers here.
  virtual std::vector<Operation> Finish(const Scope& /*scope*/) { return {}; }

  // The slot variable "<var>/<name()><suffix>" of `var`, created on first
  // use: zeros of var's shape, colocated with var.
  Variable GetSlot(const Variable& var, absl::string_view suffix);
  // A scalar variable of the optimizer's own named `name`, colocated with
  // `colocate_with` and of its dtype, starting at `initial_value`.
  Variable CreateNonSlot(const Variable& colocate_with, absl::string_view name,
                         double initial_value);
  // A scalar constant of `dtype`, for hyperparameters.
  static Output Constant(const Scope& scope, double value, DataType dtype);

 private:
  Scope scope_;     // the caller's
  Scope op_scope_;  // "<caller's>/<name>"
  std::string name_;
  std::vector<Operation> initializers_;
  std::vector<Variable> variables_;
  // Slots by (variable handle node, suffix).
  absl::flat_hash_map<std::pair<const Node*, std::string>, Variable> slots_;
};

}  // namespace distflow

#endif  // DISTFLOW_TRAINING_OPTIMIZER_H_
