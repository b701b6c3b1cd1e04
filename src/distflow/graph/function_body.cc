#include "distflow/graph/function_body.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "distflow/core/status.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {
namespace {

using AttrMap = google::protobuf::Map<std::string, AttrValue>;

// Replaces every placeholder in `value` (also inside func attrs) by its
// binding; InvalidArgument naming the placeholder when it is unbound.
absl::Status BindPlaceholders(const AttrMap& bound, AttrValue* value) {
  switch (value->value_case()) {
    case AttrValue::kPlaceholder: {
      auto it = bound.find(value->placeholder());
      if (it == bound.end()) {
        return errors::InvalidArgument("attr placeholder '$", value->placeholder(),
                                       "' is not bound by the call");
      }
      *value = it->second;
      return absl::OkStatus();
    }
    case AttrValue::kFunc:
      for (auto& [name, v] : *value->mutable_func()->mutable_attr()) {
        DF_RETURN_IF_ERROR(BindPlaceholders(bound, &v));
      }
      return absl::OkStatus();
    case AttrValue::kList:
      for (NameAttrList& f : *value->mutable_list()->mutable_func()) {
        for (auto& [name, v] : *f.mutable_attr()) DF_RETURN_IF_ERROR(BindPlaceholders(bound, &v));
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

// The dtype of a single-tensor arg of the signature, from the bound attrs.
absl::Status ArgType(const OpDef::ArgDef& arg, const AttrMap& bound, DataType* type) {
  if (!arg.number_attr().empty() || !arg.type_list_attr().empty()) {
    return errors::Unimplemented("arg '", arg.name(),
                                 "' is a list; function args and results must be single tensors");
  }
  if (arg.type() != DT_INVALID) {
    *type = arg.type();
  } else {
    auto it = bound.find(arg.type_attr());
    if (it == bound.end() || it->second.value_case() != AttrValue::kType) {
      return errors::InvalidArgument("arg '", arg.name(), "' has type attr '", arg.type_attr(),
                                     "', which is not bound to a type");
    }
    *type = it->second.type();
  }
  if (arg.is_ref()) *type = MakeRefType(*type);
  return absl::OkStatus();
}

bool TypesCompatible(DataType produced, DataType expected) {
  if (produced == expected) return true;
  return IsRefType(produced) && !IsRefType(expected) && BaseType(produced) == expected;
}

// Builds the body into `body`; errors are prefixed by the caller.
class Instantiator {
 public:
  Instantiator(const FunctionDef& fdef, AttrMap bound, FunctionBody* body)
      : fdef_(fdef), bound_(std::move(bound)), body_(body), g_(body->graph.get()) {}

  absl::Status Run() {
    const OpDef& sig = fdef_.signature();
    for (int i = 0; i < sig.input_arg_size(); ++i) {
      const OpDef::ArgDef& arg = sig.input_arg(i);
      DataType type;
      DF_RETURN_IF_ERROR(ArgType(arg, bound_, &type));
      NodeDef def;
      def.set_name(arg.name());
      def.set_op("_Arg");
      AddNodeAttr("T", type, &def);
      AddNodeAttr("index", int64_t{i}, &def);
      DF_ASSIGN_OR_RETURN(Node * n, AddNamed(std::move(def)));
      body_->arg_nodes.push_back(n);
      body_->arg_types.push_back(type);
    }
    std::vector<Node*> nodes;
    for (const NodeDef& original : fdef_.node_def()) {
      NodeDef def = original;
      def.clear_input();
      for (auto& [name, value] : *def.mutable_attr()) {
        DF_RETURN_IF_ERROR(
            errors::Annotate(BindPlaceholders(bound_, &value),
                             absl::StrCat("node '", def.name(), "' attr '", name, "': ")));
      }
      absl::StatusOr<Node*> n = AddNamed(std::move(def));
      if (!n.ok()) {
        return errors::Annotate(n.status(), absl::StrCat("node '", original.name(), "': "));
      }
      // Checked with the FunctionDef's inputs (their count and order).
      NodeDef check = (*n)->def();
      *check.mutable_input() = original.input();
      DF_RETURN_IF_ERROR(ValidateNodeDef(check, (*n)->op_def()));
      nodes.push_back(*n);
    }
    for (size_t k = 0; k < nodes.size(); ++k) {
      Node* n = nodes[k];
      int data_index = 0;
      for (const std::string& input : fdef_.node_def(static_cast<int>(k)).input()) {
        if (!input.empty() && input[0] == '^') {
          DF_ASSIGN_OR_RETURN(Node * src, FindBodyNode(n, input.substr(1), input));
          g_->AddControlEdge(src, n);
          continue;
        }
        if (data_index >= n->num_inputs()) {
          return errors::InvalidArgument("node '", n->name(), "' has more inputs than its op '",
                                         n->type_string(), "' takes (", n->num_inputs(), ")");
        }
        DF_ASSIGN_OR_RETURN(Endpoint src, ResolveTensor(n->name(), input));
        const DataType produced = src.node->output_type(src.index);
        if (!TypesCompatible(produced, n->input_type(data_index))) {
          return errors::InvalidArgument("node '", n->name(), "': input ", data_index, " ('", input,
                                         "') expects ", DataTypeString(n->input_type(data_index)),
                                         " but gets ", DataTypeString(produced));
        }
        g_->AddEdge(src.node, src.index, n, data_index++);
      }
      if (data_index != n->num_inputs()) {
        return errors::InvalidArgument("node '", n->name(), "' has ", data_index,
                                       " data inputs but its op '", n->type_string(), "' takes ",
                                       n->num_inputs());
      }
    }
    for (int i = 0; i < sig.output_arg_size(); ++i) {
      const OpDef::ArgDef& arg = sig.output_arg(i);
      DataType type;
      DF_RETURN_IF_ERROR(ArgType(arg, bound_, &type));
      auto it = fdef_.ret().find(arg.name());
      if (it == fdef_.ret().end()) {
        return errors::InvalidArgument("output '", arg.name(), "' has no entry in ret");
      }
      DF_ASSIGN_OR_RETURN(Endpoint src, ResolveTensor(absl::StrCat("ret '", arg.name(), "'"),
                                                      it->second, /*is_ret=*/true));
      if (!TypesCompatible(src.node->output_type(src.index), type)) {
        return errors::InvalidArgument("output '", arg.name(), "' is ", DataTypeString(type),
                                       " but ret '", it->second, "' is ",
                                       DataTypeString(src.node->output_type(src.index)));
      }
      NodeDef def;
      def.set_name(absl::StrCat(arg.name(), "_RetVal"));
      def.set_op("_Retval");
      AddNodeAttr("T", BaseType(type), &def);
      AddNodeAttr("index", int64_t{i}, &def);
      DF_ASSIGN_OR_RETURN(Node * r, AddNamed(std::move(def)));
      g_->AddEdge(src.node, src.index, r, 0);
      body_->ret_nodes.push_back(r);
      body_->ret_types.push_back(BaseType(type));
    }
    for (const std::string& name : sig.control_output()) {
      auto it = fdef_.control_ret().find(name);
      if (it == fdef_.control_ret().end()) {
        return errors::InvalidArgument("control output '", name, "' has no entry in control_ret");
      }
      auto node = by_name_.find(it->second);
      if (node == by_name_.end() || !node->second->IsOp() ||
          node->second->type_string() == "_Arg" || node->second->type_string() == "_Retval") {
        return errors::InvalidArgument("control_ret '", name, "' names a missing node '",
                                       it->second, "'");
      }
      body_->control_ret_nodes.push_back(node->second);
    }
    FixupSourceAndSinkEdges(g_);
    std::vector<Node*> order;
    return TopologicalOrder(*g_, &order);
  }

 private:
  struct Endpoint {
    Node* node;
    int index;
  };

  absl::StatusOr<Node*> AddNamed(NodeDef def) {
    if (by_name_.contains(def.name())) {
      return errors::InvalidArgument("the name '", def.name(),
                                     "' is used twice (by nodes or args)");
    }
    if (!IsValidNodeName(def.name())) {
      return errors::InvalidArgument("node name '", def.name(), "' is not valid");
    }
    DF_ASSIGN_OR_RETURN(Node * n, g_->AddNode(std::move(def)));
    by_name_[n->name()] = n;
    return n;
  }

  absl::StatusOr<Node*> FindBodyNode(const Node* user, absl::string_view name,
                                     absl::string_view input) {
    auto it = by_name_.find(name);
    if (it == by_name_.end() || it->second->type_string() == "_Retval") {
      return errors::InvalidArgument("node '", user->name(), "': input '", input,
                                     "' names a missing node '", name, "'");
    }
    return it->second;
  }

  // "arg", "node:out_arg" or "node:out_arg:index".
  absl::StatusOr<Endpoint> ResolveTensor(absl::string_view user, const std::string& input,
                                         bool is_ret = false) {
    const std::string where = is_ret ? std::string(user) : absl::StrCat("node '", user, "'");
    std::vector<absl::string_view> parts = absl::StrSplit(input, ':');
    auto node = by_name_.find(parts[0]);
    if (node == by_name_.end() || node->second->type_string() == "_Retval") {
      return errors::InvalidArgument(where, ": input '", input, "' names a missing node '",
                                     parts[0], "'");
    }
    Node* src = node->second;
    const bool is_arg = src->type_string() == "_Arg" && src->name() == parts[0];
    if (parts.size() == 1) {
      if (!is_arg) {
        return errors::InvalidArgument(where, ": input '", input,
                                       "' must be 'node:output_arg:index' (or an argument name)");
      }
      return Endpoint{src, 0};
    }
    if (is_arg || parts.size() > 3) {
      return errors::InvalidArgument(where, ": input '", input, "' is malformed");
    }
    NameRangeMap inputs, outputs;
    DF_RETURN_IF_ERROR(NameRangesForNode(src->def(), src->op_def(), &inputs, &outputs));
    auto range = outputs.find(parts[1]);
    if (range == outputs.end()) {
      return errors::InvalidArgument(where, ": input '", input, "': node '", src->name(), "' (",
                                     src->type_string(), ") has no output arg '", parts[1], "'");
    }
    int index = 0;
    if (parts.size() == 3 && !absl::SimpleAtoi(parts[2], &index)) {
      return errors::InvalidArgument(where, ": input '", input, "' has a bad index '", parts[2],
                                     "'");
    }
    if (index < 0 || index >= range->second.second - range->second.first) {
      return errors::InvalidArgument(where, ": input '", input, "': output arg '", parts[1],
                                     "' of node '", src->name(), "' has ",
                                     range->second.second - range->second.first, " tensors");
    }
    return Endpoint{src, range->second.first + index};
  }

  const FunctionDef& fdef_;
  const AttrMap bound_;
  FunctionBody* body_;
  Graph* g_;
  absl::flat_hash_map<std::string, Node*> by_name_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FunctionBody>> InstantiateFunctionBody(
    const std::shared_ptr<const FunctionLibraryDefinition>& library, const NameAttrList& func) {
  const FunctionDef* fdef = library == nullptr ? nullptr : library->Find(func.name());
  if (fdef == nullptr) {
    return errors::NotFound("function '", func.name(), "' is not in the graph's library");
  }
  AttrMap bound = func.attr();
  for (const OpDef::AttrDef& attr : fdef->signature().attr()) {
    if (bound.contains(attr.name())) continue;
    if (!attr.has_default_value()) {
      return errors::InvalidArgument("function '", func.name(), "': attr '", attr.name(),
                                     "' is not given by the call and has no default");
    }
    bound[attr.name()] = attr.default_value();
  }
  auto body = std::make_unique<FunctionBody>();
  body->graph = std::make_unique<Graph>(library->op_registry());
  body->graph->set_flib_def(library);
  DF_RETURN_IF_ERROR(errors::Annotate(Instantiator(*fdef, std::move(bound), body.get()).Run(),
                                      absl::StrCat("function '", func.name(), "': ")));
  return body;
}

}  // namespace distflow
