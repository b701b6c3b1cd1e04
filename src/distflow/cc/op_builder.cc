#include "distflow/cc/op_builder.h"

#include <vector>

#include "distflow/core/status.h"

namespace distflow {
namespace ops {
namespace internal {
namespace {

// The first error among the constants of `arg`, or nullptr.
const absl::Status* ConstantError(const OpArg& arg) {
  if (arg.single() != nullptr) {
    return arg.single()->status().ok() ? nullptr : &arg.single()->status();
  }
  for (const Input& in : *arg.list()) {
    if (!in.status().ok()) return &in.status();
  }
  return nullptr;
}

absl::Status AddOpNode(const Scope& scope, absl::string_view op_name,
                       std::initializer_list<OpArg> inputs, std::initializer_list<OpAttr> attrs,
                       Node** node) {
  // Constants become Const nodes before this op takes its name, so they are
  // named in the scope's sub-scope "Const" whatever name the op asked for.
  std::vector<std::vector<NodeBuilder::NodeOut>> args;
  args.reserve(inputs.size());
  for (const OpArg& arg : inputs) {
    if (const absl::Status* bad = ConstantError(arg)) {
      return errors::Annotate(
          *bad, absl::StrCat("constant for input ", args.size(), " of ", op_name, ": "));
    }
    if (arg.single() != nullptr) {
      args.push_back({AsNodeOut(scope, *arg.single())});
    } else {
      args.push_back(AsNodeOutList(scope, *arg.list()));
    }
    if (!scope.ok()) return scope.status();
  }
  NodeBuilder builder(scope.GetUniqueNameForOp(op_name), op_name);
  auto arg_it = inputs.begin();
  for (const auto& tensors : args) {
    if (arg_it->single() != nullptr) {
      builder.Input(tensors[0]);
    } else {
      builder.Input(absl::Span<const NodeBuilder::NodeOut>(tensors));
    }
    ++arg_it;
  }
  for (const OpAttr& attr : attrs) builder.Attr(attr.name, attr.value);
  scope.UpdateBuilder(&builder);
  DF_RETURN_IF_ERROR(builder.Finalize(scope.graph(), node));
  return scope.DoShapeInference(*node);
}

}  // namespace

Node* BuildOp(const Scope& scope, absl::string_view op_name, std::initializer_list<OpArg> inputs,
              std::initializer_list<OpAttr> attrs) {
  if (!scope.ok()) return nullptr;
  Graph* graph = scope.graph();
  const int first_new_id = graph->num_node_ids();
  Node* node = nullptr;
  absl::Status s = AddOpNode(scope, op_name, inputs, attrs, &node);
  if (s.ok()) return node;
  // Drop the op and the Consts made for its inputs: nodes added since start.
  for (int id = first_new_id; id < graph->num_node_ids(); ++id) {
    if (Node* n = graph->FindNodeId(id)) graph->RemoveNode(n);
  }
  scope.UpdateStatus(s);
  return nullptr;
}

OutputList AllOutputs(const Operation& op) {
  OutputList outputs;
  if (op.node() == nullptr) return outputs;
  outputs.reserve(op.num_outputs());
  for (int o = 0; o < op.num_outputs(); ++o) outputs.push_back(op.output(o));
  return outputs;
}

}  // namespace internal
NodeBuilder::NodeOut AsNodeOut(const Scope& scope, const Input& input) {
  if (!input.status().ok()) {
    scope.UpdateStatus(input.status());
    return NodeBuilder::NodeOut();
  }
  if (input.node() != nullptr) {
    return NodeBuilder::NodeOut(input.node(), input.index());
  }
  if (!input.tensor().IsInitialized()) {
    scope.UpdateStatus(
        errors::InvalidArgument("an input is neither an Output nor a constant (a null Output: did "
                                "building its op fail?)"));
    return NodeBuilder::NodeOut();
  }
  const Tensor& value = input.tensor();
  Node* c = internal::BuildOp(scope.NewSubScope("Const"), "Const", {},
                              {{"value", value}, {"dtype", value.dtype()}});
  return NodeBuilder::NodeOut(c, 0);
}

std::vector<NodeBuilder::NodeOut> AsNodeOutList(const Scope& scope, const InputList& inputs) {
  std::vector<NodeBuilder::NodeOut> out;
  out.reserve(inputs.size());
  for (const Input& input : inputs) {
    out.push_back(AsNodeOut(scope, input));
    if (!scope.ok()) break;
  }
  return out;
}

}  // namespace ops
}  // namespace distflow
