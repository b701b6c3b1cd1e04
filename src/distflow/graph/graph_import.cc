#include "distflow/graph/graph_import.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/tensor_id.h"

namespace distflow {
namespace {

// "node:index" with the index written out.
std::string CanonicalTensorName(const std::string& name) {
  TensorId id;
  if (!ParseTensorName(name, &id).ok()) return name;
  return absl::StrCat(id.node, ":", id.index);
}

// Every key names an output of the imported graph and maps it to an
// existing tensor of the same dtype.
absl::Status CheckInputMap(const absl::flat_hash_map<std::string, NodeBuilder::NodeOut>& input_map,
                           const Graph& imported) {
  absl::flat_hash_map<absl::string_view, const Node*> by_name;
  for (const Node* n : imported.op_nodes()) by_name[n->name()] = n;
  for (const auto& [key, to] : input_map) {
    TensorId id;
    DF_RETURN_IF_ERROR(ParseTensorName(key, &id));
    auto it = by_name.find(id.node);
    if (it == by_name.end() || id.index < 0 || id.index >= it->second->num_outputs()) {
      return errors::InvalidArgument("input_map key '", key,
                                     "' is not a tensor of the imported graph");
    }
    if (to.node == nullptr || to.index < 0 || to.index >= to.node->num_outputs()) {
      return errors::InvalidArgument("input_map maps '", key, "' to a missing tensor");
    }
    const DataType from = it->second->output_type(id.index);
    if (to.node->output_type(to.index) != from) {
      return errors::InvalidArgument("input_map maps '", key, "' of type ", DataTypeString(from),
                                     " to '", to.node->name(), ":", to.index, "' of type ",
                                     DataTypeString(to.node->output_type(to.index)));
    }
  }
  return absl::OkStatus();
}

absl::Status AddImportedNodes(const ImportGraphDefOptions& options, const Graph& imported,
                              Graph* graph, ShapeRefiner* refiner, std::vector<Node*>* added) {
  absl::flat_hash_map<std::string, NodeBuilder::NodeOut> input_map;
  for (const auto& [name, target] : options.input_map) {
    input_map[CanonicalTensorName(name)] = target;
  }
  DF_RETURN_IF_ERROR(CheckInputMap(input_map, imported));
  absl::flat_hash_set<std::string> taken;
  for (const Node* n : graph->op_nodes()) taken.insert(n->name());
  absl::flat_hash_map<const Node*, Node*> copies;
  std::vector<Node*> order;
  DF_RETURN_IF_ERROR(TopologicalOrder(imported, &order));
  for (const Node* n : order) {
    NodeDef def = n->def();
    def.set_name(options.prefix.empty() ? n->name() : absl::StrCat(options.prefix, "/", n->name()));
    if (taken.contains(def.name())) {
      return errors::InvalidArgument("cannot import node '", def.name(),
                                     "': the graph has a node of that name");
    }
    def.clear_input();
    absl::StatusOr<Node*> copy = graph->AddNode(def);
    DF_RETURN_IF_ERROR(copy.status());
    added->push_back(*copy);
    copies[n] = *copy;
  }
  for (const Node* n : order) {
    Node* dst = copies[n];
    for (const Edge* e : n->in_edges()) {
      if (!e->src()->IsOp()) continue;
      if (e->IsControlEdge()) {
        graph->AddControlEdge(copies[e->src()], dst);
        continue;
      }
      const std::string key = absl::StrCat(e->src()->name(), ":", e->src_output());
      auto mapped = input_map.find(key);
      if (mapped == input_map.end()) {
        graph->AddEdge(copies[e->src()], e->src_output(), dst, e->dst_input());
        continue;
      }
      graph->AddEdge(mapped->second.node, mapped->second.index, dst, e->dst_input());
    }
  }
  for (const Node* n : order) {
    absl::Status s = refiner->AddNode(copies[n]);
    if (!s.ok()) return errors::Annotate(s, absl::StrCat("node '", copies[n]->name(), "': "));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ImportGraphDef(const ImportGraphDefOptions& options, const GraphDef& graph_def,
                            Graph* graph, ShapeRefiner* refiner, std::vector<Node*>* added) {
  Graph imported(graph->op_registry());
  DF_RETURN_IF_ERROR(ConvertGraphDefToGraph(GraphConstructorOptions(), graph_def, &imported));
  if (graph_def.library().function_size() > 0) {
    if (graph->library().function_size() > 0) {
      return errors::Unimplemented(
          "importing a function library into a graph that has one already");
    }
    DF_RETURN_IF_ERROR(graph->set_library(graph_def.library()));
  }
  std::vector<Node*> nodes;
  absl::Status s = AddImportedNodes(options, imported, graph, refiner, &nodes);
  if (!s.ok()) {
    for (Node* n : nodes) graph->RemoveNode(n);
    return s;
  }
  if (added != nullptr) *added = std::move(nodes);
  return absl::OkStatus();
}

}  // namespace distflow
