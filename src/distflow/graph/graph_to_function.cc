#include "distflow/graph/graph_to_function.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/node_def_util.h"

namespace distflow {
namespace {

// The function-form name of output `index` of `node`: "node:out_arg:k".
absl::StatusOr<std::string> OutputName(const Node& node, int index) {
  NameRangeMap inputs, outputs;
  DF_RETURN_IF_ERROR(NameRangesForNode(node.def(), node.op_def(), &inputs, &outputs));
  for (const auto& [arg, range] : outputs) {
    if (index >= range.first && index < range.second) {
      return absl::StrCat(node.name(), ":", arg, ":", index - range.first);
    }
  }
  return errors::InvalidArgument("node '", node.name(), "' has no output ", index);
}

}  // namespace

absl::StatusOr<FunctionDef> GraphToFunctionDef(const Graph& graph, const std::string& name,
                                               const std::vector<const Node*>& args,
                                               const std::vector<GraphTensor>& outputs) {
  FunctionDef f;
  f.mutable_signature()->set_name(name);
  absl::flat_hash_map<const Node*, std::string> arg_names;
  for (size_t i = 0; i < args.size(); ++i) {
    const Node* n = args[i];
    if (n == nullptr || n->type_string() != "Placeholder") {
      return errors::InvalidArgument("function '", name, "': argument ", i, " (",
                                     n == nullptr ? "null" : n->name(), ") is not a Placeholder");
    }
    if (!arg_names.emplace(n, absl::StrCat("arg", i)).second) {
      return errors::InvalidArgument("function '", name, "': '", n->name(),
                                     "' is given as an argument twice");
    }
    OpDef::ArgDef* in = f.mutable_signature()->add_input_arg();
    in->set_name(arg_names[n]);
    in->set_type(n->output_type(0));
  }
  auto tensor_name = [&](const Node* n, int index) -> absl::StatusOr<std::string> {
    auto arg = arg_names.find(n);
    if (arg != arg_names.end()) return arg->second;
    return OutputName(*n, index);
  };
  // Op nodes in id order: a graph built front to back lists producers first.
  for (const Node* n : graph.op_nodes()) {
    if (arg_names.contains(n)) continue;
    if (n->type_string() == "Placeholder") {
      return errors::InvalidArgument("function '", name, "': placeholder '", n->name(),
                                     "' is not one of its arguments (a function is fed only "
                                     "through its arguments)");
    }
    NodeDef* def = f.add_node_def();
    *def = n->def();
    def->clear_input();
    std::vector<const Edge*> data(n->num_inputs(), nullptr);
    std::vector<std::string> control;
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) {
        if (e->src()->IsSource()) continue;
        if (arg_names.contains(e->src())) {
          return errors::InvalidArgument("function '", name, "': node '", n->name(),
                                         "' has a control input from argument '", e->src()->name(),
                                         "'");
        }
        control.push_back(absl::StrCat("^", e->src()->name()));
        continue;
      }
      data[e->dst_input()] = e;
    }
    for (int i = 0; i < static_cast<int>(data.size()); ++i) {
      if (data[i] == nullptr) {
        return errors::InvalidArgument("function '", name, "': input ", i, " of node '", n->name(),
                                       "' is not connected");
      }
      DF_ASSIGN_OR_RETURN(std::string in, tensor_name(data[i]->src(), data[i]->src_output()));
      def->add_input(std::move(in));
    }
    std::sort(control.begin(), control.end());
    for (std::string& c : control) def->add_input(std::move(c));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [node, index] = outputs[i];
    if (node == nullptr || index < 0 || index >= node->num_outputs()) {
      return errors::InvalidArgument("function '", name, "': output ", i,
                                     " is not a tensor of the graph");
    }
    const std::string out = absl::StrCat("output", i);
    OpDef::ArgDef* arg = f.mutable_signature()->add_output_arg();
    arg->set_name(out);
    arg->set_type(BaseType(node->output_type(index)));
    DF_ASSIGN_OR_RETURN(std::string ret, tensor_name(node, index));
    (*f.mutable_ret())[out] = std::move(ret);
  }
  return f;
}

}  // namespace distflow
