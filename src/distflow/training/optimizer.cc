#include "distflow/training/optimizer.h"

#include "absl/strings/str_join.h"
#include "distflow/cc/const_op.h"
#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/no_op.h"
#include "distflow/core/status.h"
#include "distflow/gradients/gradients.h"

namespace distflow {
namespace {

// A sub-scope name for `var`'s update: its name with '/' replaced, as
// TensorFlow's "update_<var>".
std::string UpdateScopeName(const Variable& var) {
  std::string name = absl::StrCat("update_", var.name());
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return name;
}

}  // namespace

Optimizer::Optimizer(const Scope& scope, std::string name)
    : scope_(scope), op_scope_(scope.NewSubScope(name)), name_(std::move(name)) {}

absl::StatusOr<std::vector<GradAndVar>> Optimizer::ComputeGradients(
    const Output& loss, const std::vector<Variable>& var_list) {
  DF_RETURN_IF_ERROR(scope_.status());
  if (loss.node() == nullptr) {
    return errors::InvalidArgument(name_,
                                   ".ComputeGradients: the loss is null (did "
                                   "building it fail?)");
  }
  OutputList handles;
  for (size_t i = 0; i < var_list.size(); ++i) {
    if (var_list[i].handle().node() == nullptr) {
      return errors::InvalidArgument(name_, ".ComputeGradients: variable ", i,
                                     " is null (did building it fail?)");
    }
    handles.push_back(var_list[i].handle());
  }
  OutputList grads;
  DF_RETURN_IF_ERROR(
      AddSymbolicGradients(scope_.NewSubScope("gradients"), {loss}, handles, &grads));
  std::vector<GradAndVar> result;
  for (size_t i = 0; i < var_list.size(); ++i) {
    result.push_back(GradAndVar{grads[i], var_list[i]});
  }
  return result;
}

absl::StatusOr<Operation> Optimizer::ApplyGradients(const std::vector<GradAndVar>& grads_and_vars,
                                                    const Variable* global_step,
                                                    const std::vector<Operation>& after) {
  DF_RETURN_IF_ERROR(scope_.status());
  std::vector<const GradAndVar*> live;
  std::vector<std::string> names;
  for (const GradAndVar& gv : grads_and_vars) {
    if (gv.variable.handle().node() == nullptr) {
      return errors::InvalidArgument(name_, ".ApplyGradients: a variable is null");
    }
    names.push_back(gv.variable.name());
    if (gv.gradient.node() != nullptr) live.push_back(&gv);
  }
  if (live.empty()) {
    return errors::InvalidArgument(name_,
                                   ".ApplyGradients: no gradients provided for any variable: [",
                                   absl::StrJoin(names, ", "), "]");
  }
  Prepare(live[0]->variable);
  std::vector<Operation> updates;
  for (const GradAndVar* gv : live) {
    const Scope update_scope = op_scope_.NewSubScope(UpdateScopeName(gv->variable))
                                   .ColocateWith(gv->variable.handle())
                                   .WithControlDependencies(after);
    updates.push_back(ApplyDense(update_scope, gv->gradient, gv->variable));
  }
  DF_RETURN_IF_ERROR(scope_.status());
  for (const Operation& op : Finish(op_scope_.WithControlDependencies(updates))) {
    updates.push_back(op);
  }
  Operation step;
  if (global_step != nullptr) {
    step = global_step->AssignAdd(op_scope_.WithOpName("increment_global_step")
                                      .WithControlDependencies(updates)
                                      .ColocateWith(global_step->handle()),
                                  ops::ScalarConst(op_scope_, 1, global_step->dtype()));
  } else {
    step = ops::NoOp(op_scope_.WithOpName("update").WithControlDependencies(updates));
  }
  DF_RETURN_IF_ERROR(scope_.status());
  return step;
}

absl::StatusOr<Operation> Optimizer::Minimize(const Output& loss,
                                              const std::vector<Variable>& var_list,
                                              const Variable* global_step) {
  DF_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads_and_vars, ComputeGradients(loss, var_list));
  return ApplyGradients(grads_and_vars, global_step);
}

Variable Optimizer::GetSlot(const Variable& var, absl::string_view suffix) {
  auto key = std::make_pair(static_cast<const Node*>(var.handle().node()), std::string(suffix));
  auto it = slots_.find(key);
  if (it != slots_.end()) return it->second;
  const Scope slot_scope = scope_.ColocateWith(var.handle());
  const Variable slot(slot_scope.WithOpName(var.name(), "/", name_, suffix),
                      ops::ZerosLike(slot_scope, var.initial_value()));
  if (slot.handle().node() != nullptr) {
    initializers_.push_back(slot.initializer());
    variables_.push_back(slot);
  }
  slots_.emplace(std::move(key), slot);
  return slot;
}

Variable Optimizer::CreateNonSlot(const Variable& colocate_with, absl::string_view name,
                                  double initial_value) {
  const Scope s = scope_.ColocateWith(colocate_with.handle());
  const Variable v(s.WithOpName(name), Constant(s, initial_value, colocate_with.dtype()));
  if (v.handle().node() != nullptr) {
    initializers_.push_back(v.initializer());
    variables_.push_back(v);
  }
  return v;
}

Output Optimizer::Constant(const Scope& scope, double value, DataType dtype) {
  return ops::ScalarConst(scope, value, dtype);
}

}  // namespace distflow
