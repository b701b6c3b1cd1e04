#include "distflow/graph/node_builder.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"
#include "distflow/framework/device_name_utils.h"

namespace distflow {
namespace {

std::string TensorName(const NodeBuilder::NodeOut& t) {
  return absl::StrCat(t.node->name(), ":", t.index);
}

std::string InputString(const NodeBuilder::NodeOut& t) {
  return t.index == 0 ? t.node->name() : TensorName(t);
}

std::string ArgNames(const OpDef& op_def) {
  std::vector<std::string> names;
  for (const auto& arg : op_def.input_arg()) names.push_back(arg.name());
  return absl::StrJoin(names, ", ");
}

// OK iff a tensor of type `actual` may feed an input declared `expected`: the
// same type, or a ref tensor feeding a non-ref input of its base type.
bool TypeCompatible(DataType expected, DataType actual) {
  return expected == actual || (!IsRefType(expected) && expected == BaseType(actual));
}

}  // namespace

NodeBuilder::NodeBuilder(absl::string_view name, absl::string_view op_name,
                         const OpRegistry* registry)
    : registry_(registry) {
  def_.set_name(std::string(name));
  def_.set_op(std::string(op_name));
}

NodeBuilder& NodeBuilder::Input(Node* src_node, int src_index) {
  return Input(NodeOut(src_node, src_index));
}

NodeBuilder& NodeBuilder::Input(NodeOut src) {
  inputs_.push_back(InputArg{false, {src}});
  return *this;
}

NodeBuilder& NodeBuilder::Input(absl::Span<const NodeOut> src_list) {
  inputs_.push_back(InputArg{true, {src_list.begin(), src_list.end()}});
  return *this;
}

NodeBuilder& NodeBuilder::ControlInput(Node* src_node) {
  for (Node* n : control_inputs_) {
    if (n == src_node && n != nullptr) return *this;
  }
  control_inputs_.push_back(src_node);
  return *this;
}

NodeBuilder& NodeBuilder::ControlInputs(absl::Span<Node* const> src_nodes) {
  for (Node* n : src_nodes) ControlInput(n);
  return *this;
}

NodeBuilder& NodeBuilder::Device(absl::string_view device_spec) {
  def_.set_device(std::string(device_spec));
  return *this;
}

absl::Status NodeBuilder::InferAttrsFromArg(const OpDef& op_def, int arg_index,
                                            NodeDef* def) const {
  const OpDef::ArgDef& arg = op_def.input_arg(arg_index);
  const InputArg& in = inputs_[arg_index];
  const std::string node = FormatNodeForError(*def);
  auto& attrs = *def->mutable_attr();

  if (!arg.number_attr().empty()) {
    const int64_t n = static_cast<int64_t>(in.tensors.size());
    auto it = attrs.find(arg.number_attr());
    if (it == attrs.end()) {
      SetAttrValue(n, &attrs[arg.number_attr()]);
    } else if (it->second.value_case() != AttrValue::kI || it->second.i() != n) {
      return errors::InvalidArgument(node, ": input '", arg.name(), "' has ", n,
                                     " tensors but attr '", arg.number_attr(), "' is ",
                                     SummarizeAttrValue(it->second));
    }
  }
  if (!arg.type_attr().empty()) {
    for (const NodeOut& t : in.tensors) {
      const DataType dt = BaseType(t.node->output_type(t.index));
      auto it = attrs.find(arg.type_attr());
      if (it == attrs.end()) {
        SetAttrValue(dt, &attrs[arg.type_attr()]);
      } else if (it->second.value_case() != AttrValue::kType || it->second.type() != dt) {
        return errors::InvalidArgument(node, ": input '", arg.name(), "' gets ", DataTypeString(dt),
                                       " from '", TensorName(t), "' but attr '", arg.type_attr(),
                                       "' is ", SummarizeAttrValue(it->second),
                                       " (set by an earlier input or explicitly)");
      }
    }
  } else if (!arg.type_list_attr().empty()) {
    DataTypeVector types;
    for (const NodeOut& t : in.tensors) {
      types.push_back(BaseType(t.node->output_type(t.index)));
    }
    AttrValue inferred;
    SetAttrValue(absl::Span<const DataType>(types), &inferred);
    auto it = attrs.find(arg.type_list_attr());
    if (it == attrs.end()) {
      attrs[arg.type_list_attr()] = std::move(inferred);
    } else if (!AreAttrValuesEqual(it->second, inferred)) {
      return errors::InvalidArgument(node, ": input '", arg.name(), "' has types ",
                                     DataTypeSliceString(types), " but attr '",
                                     arg.type_list_attr(), "' is ", SummarizeAttrValue(it->second));
    }
  }
  return absl::OkStatus();
}

absl::Status NodeBuilder::BuildNodeDef(const Graph& graph, const OpDef& op_def,
                                       NodeDef* def) const {
  *def = def_;
  const std::string node = FormatNodeForError(*def);
  if (!IsValidNodeName(def->name())) {
    return errors::InvalidArgument("'", def->name(), "' is not a valid node name (op ", def->op(),
                                   ")");
  }
  if (!def->device().empty()) {
    ParsedDeviceName parsed;
    absl::Status s = device_name::ParseOrError(def->device(), &parsed);
    if (!s.ok()) return errors::Annotate(s, absl::StrCat(node, ": "));
  }
  if (static_cast<int>(inputs_.size()) != op_def.input_arg_size()) {
    return errors::InvalidArgument(node, ": op '", op_def.name(), "' takes ",
                                   op_def.input_arg_size(), " inputs (", ArgNames(op_def), ") but ",
                                   inputs_.size(), " were given");
  }
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    const OpDef::ArgDef& arg = op_def.input_arg(i);
    const InputArg& in = inputs_[i];
    const bool arg_is_list = !arg.number_attr().empty() || !arg.type_list_attr().empty();
    if (arg_is_list != in.is_list) {
      return errors::InvalidArgument(node, ": input '", arg.name(), "' takes ",
                                     arg_is_list ? "a list of tensors" : "a single tensor",
                                     " but was given ", in.is_list ? "a list" : "a single tensor");
    }
    for (const NodeOut& t : in.tensors) {
      if (t.node == nullptr) {
        return errors::InvalidArgument(node, ": input '", arg.name(),
                                       "' is missing (null node: building its producer failed?)");
      }
      if (graph.FindNodeId(t.node->id()) != t.node) {
        return errors::InvalidArgument(node, ": input '", arg.name(), "' comes from node '",
                                       t.node->name(), "' which is not in this graph");
      }
      if (t.index < 0 || t.index >= t.node->num_outputs()) {
        return errors::InvalidArgument(node, ": input '", arg.name(), "' reads '", TensorName(t),
                                       "' but node '", t.node->name(), "' has ",
                                       t.node->num_outputs(), " outputs");
      }
    }
    DF_RETURN_IF_ERROR(InferAttrsFromArg(op_def, i, def));
  }
  for (const InputArg& in : inputs_) {
    for (const NodeOut& t : in.tensors) def->add_input(InputString(t));
  }
  for (Node* c : control_inputs_) {
    if (c == nullptr) {
      return errors::InvalidArgument(node, ": a control input is a null node");
    }
    if (graph.FindNodeId(c->id()) != c) {
      return errors::InvalidArgument(node, ": control input '", c->name(),
                                     "' is not in this graph");
    }
    def->add_input(absl::StrCat("^", c->name()));
  }
  AddDefaultsToNodeDef(op_def, def);
  DF_RETURN_IF_ERROR(ValidateNodeDef(*def, op_def));

  // The producers' dtypes against the op's resolved input types: catches
  // fixed-type args and attrs that were set explicitly.
  DataTypeVector in_types, out_types;
  DF_RETURN_IF_ERROR(InOutTypesForNode(*def, op_def, &in_types, &out_types));
  int flat = 0;
  for (const InputArg& in : inputs_) {
    for (const NodeOut& t : in.tensors) {
      const DataType actual = t.node->output_type(t.index);
      if (!TypeCompatible(in_types[flat], actual)) {
        return errors::InvalidArgument(node, ": input ", flat, " expects ",
                                       DataTypeString(in_types[flat]), " but '", TensorName(t),
                                       "' is ", DataTypeString(actual));
      }
      ++flat;
    }
  }
  return absl::OkStatus();
}

absl::Status NodeBuilder::Finalize(Graph* graph, Node** created_node) const {
  if (created_node != nullptr) *created_node = nullptr;
  const OpDef* op_def;
  if (!registry_->LookUpOpDef(def_.op(), &op_def).ok()) {
    return errors::Unimplemented("op '", def_.op(), "' is not registered (",
                                 FormatNodeForError(def_), ")");
  }
  NodeDef def;
  DF_RETURN_IF_ERROR(BuildNodeDef(*graph, *op_def, &def));
  DF_ASSIGN_OR_RETURN(Node * node, graph->AddNode(std::move(def)));
  int dst = 0;
  for (const InputArg& in : inputs_) {
    for (const NodeOut& t : in.tensors) graph->AddEdge(t.node, t.index, node, dst++);
  }
  for (Node* c : control_inputs_) graph->AddControlEdge(c, node);
  if (created_node != nullptr) *created_node = node;
  return absl::OkStatus();
}

absl::StatusOr<Node*> NodeBuilder::Finalize(Graph* graph) const {
  Node* node;
  DF_RETURN_IF_ERROR(Finalize(graph, &node));
  return node;
}

}  // namespace distflow
