#include "distflow/training/variable.h"

#include "distflow/cc/const_op.h"
#include "distflow/cc/op_builder.h"
#include "distflow/core/status.h"

namespace distflow {

using ops::internal::BuildOp;

Variable::Variable(const Scope& scope, const Input& initial_value) {
  const NodeBuilder::NodeOut init = ops::AsNodeOut(scope, initial_value);
  if (!scope.ok()) return;
  const Output value(init.node, init.index);
  const DataType dtype = BaseType(value.type());
  if (dtype == DT_RESOURCE) {
    scope.UpdateStatus(errors::InvalidArgument(
        "the initial value of a Variable cannot be a resource handle (", value.name(), ")"));
    return;
  }
  const PartialTensorShape shape = scope.refiner()->OutputShape(value.node(), value.index());
  // The handle is built here rather than through BuildOp because its
  // shared_name attr is its own node name, which must be known first.
  const std::string name = scope.GetUniqueNameForOp("Variable");
  NodeBuilder builder(name, "VarHandleOp");
  builder.Attr("dtype", dtype)
      .Attr("shape", shape)
      .Attr("shared_name", name)
      .Attr("container", std::string());
  scope.UpdateBuilder(&builder);
  Node* handle = nullptr;
  absl::Status s = builder.Finalize(scope.graph(), &handle);
  if (s.ok()) s = scope.DoShapeInference(handle);
  if (!s.ok()) {
    if (handle != nullptr) scope.graph()->RemoveNode(handle);
    scope.UpdateStatus(s);
    return;
  }
  // Sub-names hang off the handle's name, relative to the scope's prefix.
  const std::string base =
      scope.name_prefix().empty() ? name : name.substr(scope.name_prefix().size() + 1);
  const Scope init_scope = scope.WithOpName(base, "/Assign").ColocateWith(Operation(handle));
  const Input handle_in(Output(handle, 0));
  const Input value_in(value);
  Node* assign = BuildOp(init_scope, "AssignVariableOp", {handle_in, value_in}, {{"dtype", dtype}});
  if (assign == nullptr) return;
  handle_ = Output(handle, 0);
  initializer_ = Operation(assign);
  initial_value_ = value;
  dtype_ = dtype;
  shape_ = shape;
}

// Reads and writes run where the variable lives, whatever device the
// caller's scope asks for, as TensorFlow places a ResourceVariable's reads on
// its handle's device: a resource edge cannot cross devices, and under a
// ReplicaDeviceSetter the caller's scope is the worker's.
Scope Variable::AtVariable(const Scope& scope) const {
  return scope.ColocateWith(Operation(handle_.node()));
}

Output Variable::Read(const Scope& scope) const {
  const Input handle(handle_);
  return Output(BuildOp(AtVariable(scope), "ReadVariableOp", {handle}, {{"dtype", dtype_}}), 0);
}

Operation Variable::Assign(const Scope& scope, const Input& value) const {
  const Input handle(handle_);
  return Operation(
      BuildOp(AtVariable(scope), "AssignVariableOp", {handle, value}, {{"dtype", dtype_}}));
}

Operation Variable::AssignAdd(const Scope& scope, const Input& value) const {
  const Input handle(handle_);
  return Operation(
      BuildOp(AtVariable(scope), "AssignAddVariableOp", {handle, value}, {{"dtype", dtype_}}));
}

Variable CreateGlobalStep(const Scope& scope) {
  return Variable(scope.WithOpName("global_step"), int64_t{0});
}

}  // namespace distflow
