#include "distflow/cc/scope.h"

#include <utility>

#include "distflow/core/status.h"

namespace distflow {

Scope Scope::NewRootScope() {
  Scope scope;
  scope.state_ = std::make_shared<SharedState>();
  scope.names_ = std::make_shared<NameMap>();
  return scope;
}

std::string Scope::UniqueName(absl::string_view base) const {
  auto [it, inserted] = names_->try_emplace(std::string(base), 0);
  if (inserted) return std::string(base);
  std::string candidate;
  do {
    candidate = absl::StrCat(base, "_", ++it->second);
  } while (names_->contains(candidate));
  names_->emplace(candidate, 0);
  return candidate;
}

Scope Scope::NewSubScope(absl::string_view child_scope_name) const {
  Scope child = *this;
  child.op_name_.clear();
  if (child_scope_name.empty()) return child;
  const std::string unique = UniqueName(child_scope_name);
  child.prefix_ = prefix_.empty() ? unique : absl::StrCat(prefix_, "/", unique);
  child.names_ = std::make_shared<NameMap>();
  return child;
}

Scope Scope::WithNamePrefix(absl::string_view prefix) const {
  Scope child = *this;
  child.op_name_.clear();
  child.prefix_ = std::string(prefix);
  child.names_ = std::make_shared<NameMap>();
  return child;
}

Scope Scope::WithOpNameImpl(std::string op_name) const {
  Scope scope = *this;
  scope.op_name_ = std::move(op_name);
  return scope;
}

Scope Scope::WithControlDependencies(absl::Span<const Operation> control_deps) const {
  Scope scope = *this;
  scope.control_deps_.insert(scope.control_deps_.end(), control_deps.begin(), control_deps.end());
  return scope;
}

Scope Scope::WithControlDependencies(const Output& control_dep) const {
  const Operation op = control_dep.op();
  return WithControlDependencies(absl::Span<const Operation>(&op, 1));
}

Scope Scope::WithNoControlDependencies() const {
  Scope scope = *this;
  scope.control_deps_.clear();
  return scope;
}

Scope Scope::WithDevice(absl::string_view device) const {
  Scope scope = *this;
  scope.device_ = std::string(device);
  scope.device_function_.reset();
  return scope;
}

Scope Scope::WithDeviceFunction(DeviceFunction fn) const {
  Scope scope = *this;
  scope.device_.clear();
  scope.device_function_ = std::make_shared<const DeviceFunction>(std::move(fn));
  return scope;
}

Scope Scope::ColocateWith(const Operation& op) const {
  Scope scope = *this;
  if (op.node() == nullptr) {
    UpdateStatus(
        errors::InvalidArgument("ColocateWith was given a null operation (did building it fail?)"));
    return scope;
  }
  scope.colocation_ = absl::StrCat("loc:@", op.node()->name());
  scope.colocation_device_ = op.node()->requested_device();
  return scope;
}

Scope Scope::ClearColocation() const {
  Scope scope = *this;
  scope.colocation_.clear();
  scope.colocation_device_.clear();
  return scope;
}

std::string Scope::GetUniqueNameForOp(absl::string_view default_name) const {
  const std::string unique = UniqueName(op_name_.empty() ? default_name : op_name_);
  return prefix_.empty() ? unique : absl::StrCat(prefix_, "/", unique);
}

absl::Status Scope::TakeStatus() const { return std::exchange(state_->status, absl::OkStatus()); }

void Scope::UpdateStatus(const absl::Status& s) const {
  if (state_->status.ok() && !s.ok()) state_->status = s;
}

void Scope::UpdateBuilder(NodeBuilder* builder) const {
  for (const Operation& op : control_deps_) builder->ControlInput(op.node());
  // Colocation wins over the scope's device or device function, as in
  // TensorFlow: the op asks for the device of the op it is colocated with.
  std::string device;
  if (!colocation_.empty()) {
    device = colocation_device_;
  } else if (device_function_ != nullptr) {
    device = (*device_function_)(builder->op_name());
  } else {
    device = device_;
  }
  if (!device.empty()) builder->Device(device);
  if (!colocation_.empty()) {
    builder->Attr("_class", std::vector<std::string>{colocation_});
  }
}

absl::Status Scope::DoShapeInference(Node* node) const { return state_->refiner.AddNode(node); }

std::shared_ptr<Graph> Scope::graph_as_shared_ptr() const {
  return std::shared_ptr<Graph>(state_, &state_->graph);
}

absl::Status Scope::ToGraphDef(GraphDef* graph_def) const {
  if (!ok()) return status();
  state_->graph.ToGraphDef(graph_def);
  return absl::OkStatus();
}

}  // namespace distflow
