#include "distflow/graph/graph_constructor.h"

#include <atomic>
#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/device_name_utils.h"

namespace distflow {
namespace {

// A ref output may feed a non-ref input (it is read); a non-ref output may
// not feed a ref input.
bool TypesCompatible(DataType produced, DataType expected) {
  if (produced == expected) return true;
  return IsRefType(produced) && !IsRefType(expected) && BaseType(produced) == expected;
}

// Graphs written at producer version 21 or before stored "unknown shape" in
// a Placeholder's `shape` attr as the empty shape, which reads as a scalar
// now; such a node gets the unknown shape it meant, as TensorFlow does
// (TF Serving's half_plus_three, from TensorFlow 1.0, is at version 21).
constexpr int kLastLegacyPlaceholderShapeVersion = 21;

NodeDef WithVersionSemantics(const NodeDef& def, int producer) {
  NodeDef out = def;
  if (producer > kLastLegacyPlaceholderShapeVersion || def.op() != "Placeholder") return out;
  auto it = out.mutable_attr()->find("shape");
  if (it != out.mutable_attr()->end() && it->second.has_shape() &&
      it->second.shape().dim_size() == 0 && !it->second.shape().unknown_rank()) {
    it->second.mutable_shape()->set_unknown_rank(true);
  }
  return out;
}

absl::Status Build(const GraphConstructorOptions& /*opts*/, const GraphDef& gdef, Graph* g) {
  if (gdef.has_library()) DF_RETURN_IF_ERROR(g->set_library(gdef.library()));
  // A graph without versions is from before versions were written.
  const int producer = gdef.has_versions() ? gdef.versions().producer() : 0;
  absl::flat_hash_map<absl::string_view, Node*> by_name;
  std::vector<Node*> nodes;
  nodes.reserve(gdef.node_size());
  for (const NodeDef& def : gdef.node()) {
    if (!IsValidNodeName(def.name())) {
      return errors::InvalidArgument("node name '", def.name(), "' is not valid",
                                     def.name().empty() ? " (empty)" : "");
    }
    if (by_name.contains(def.name())) {
      return errors::InvalidArgument("duplicate node name '", def.name(), "'");
    }
    ParsedDeviceName parsed;
    if (!device_name::Parse(def.device(), &parsed)) {
      return errors::InvalidArgument(FormatNodeForError(def), " has malformed device name '",
                                     def.device(), "'");
    }
    DF_ASSIGN_OR_RETURN(Node * n, g->AddNode(WithVersionSemantics(def, producer)));
    DF_RETURN_IF_ERROR(ValidateNodeDef(n->def(), n->op_def()));
    by_name[n->name()] = n;
    nodes.push_back(n);
  }
  // The control sources of the node being connected: a repeated "^x" adds
  // one edge, found in constant time (AddControlEdge's scan of the in-edges
  // would make a node with many control inputs quadratic).
  absl::flat_hash_set<const Node*> control_sources;
  for (Node* n : nodes) {
    int data_index = 0;
    control_sources.clear();
    for (const std::string& input : n->def().input()) {
      TensorId id;
      DF_RETURN_IF_ERROR(
          errors::Annotate(ParseTensorName(input, &id), absl::StrCat("node '", n->name(), "': ")));
      auto it = by_name.find(id.node);
      if (it == by_name.end()) {
        return errors::InvalidArgument("node '", n->name(), "': input '", input,
                                       "' names a missing node '", id.node, "'");
      }
      Node* src = it->second;
      if (id.IsControl()) {
        if (control_sources.insert(src).second) g->AddEdge(src, kControlSlot, n, kControlSlot);
        continue;
      }
      if (id.index >= src->num_outputs()) {
        return errors::InvalidArgument("node '", n->name(), "': input '", input, "' names output ",
                                       id.index, " of node '", src->name(), "' which has ",
                                       src->num_outputs(), " outputs");
      }
      const DataType produced = src->output_type(id.index);
      const DataType expected = n->input_type(data_index);
      if (!TypesCompatible(produced, expected)) {
        return errors::InvalidArgument("node '", n->name(), "': input ", data_index, " ('", input,
                                       "') expects ", DataTypeString(expected), " but '",
                                       src->name(), "' produces ", DataTypeString(produced));
      }
      g->AddEdge(src, id.index, n, data_index);
      ++data_index;
    }
  }
  FixupSourceAndSinkEdges(g);
  std::vector<Node*> order;
  DF_RETURN_IF_ERROR(TopologicalOrder(*g, &order));
  if (gdef.has_versions()) g->set_versions(gdef.versions());
  return absl::OkStatus();
}

}  // namespace

namespace {

std::atomic<int64_t>& MaxGraphNodesCell() {
  static std::atomic<int64_t> cell(kDefaultMaxGraphNodes);
  return cell;
}

}  // namespace

int64_t MaxGraphNodes() { return MaxGraphNodesCell().load(std::memory_order_relaxed); }

void SetMaxGraphNodes(int64_t max_nodes) {
  MaxGraphNodesCell().store(max_nodes < 0 ? 0 : max_nodes, std::memory_order_relaxed);
}

absl::Status ConvertGraphDefToGraph(const GraphConstructorOptions& opts, const GraphDef& graph_def,
                                    Graph* graph) {
  if (opts.max_nodes > 0 && graph_def.node_size() > opts.max_nodes) {
    return errors::ResourceExhausted("graph has ", graph_def.node_size(),
                                     " nodes, more than the limit of ", opts.max_nodes,
                                     " nodes per graph (distflow server --max-graph-nodes)");
  }
  // Build into a scratch graph so a failure leaves `graph` untouched; on
  // success the scratch graph becomes `graph` (which has no op nodes to
  // lose) without a copy.
  Graph scratch(graph->op_registry());
  DF_RETURN_IF_ERROR(Build(opts, graph_def, &scratch));
  graph->Swap(&scratch);
  return absl::OkStatus();
}

void FixupSourceAndSinkEdges(Graph* g) {
  // A node without edges cannot have the edge yet: add it without the
  // duplicate scan of AddControlEdge, which over SINK's in-edges would make
  // a graph of many leaves quadratic.
  for (Node* n : g->op_nodes()) {
    if (n->in_edges().empty()) g->AddEdge(g->source_node(), kControlSlot, n, kControlSlot);
    if (n->out_edges().empty()) g->AddEdge(n, kControlSlot, g->sink_node(), kControlSlot);
  }
}

absl::Status TopologicalOrder(const Graph& g, std::vector<Node*>* order) {
  order->clear();
  std::vector<int> pending(g.num_node_ids(), 0);
  std::deque<Node*> ready;
  for (Node* n : g.op_nodes()) {
    for (const Edge* e : n->in_edges()) {
      if (e->src()->IsOp() && !e->src()->IsNextIteration()) ++pending[n->id()];
    }
    if (pending[n->id()] == 0) ready.push_back(n);
  }
  while (!ready.empty()) {
    Node* n = ready.front();
    ready.pop_front();
    order->push_back(n);
    if (n->IsNextIteration()) continue;
    for (const Edge* e : n->out_edges()) {
      Node* d = e->dst();
      if (d->IsOp() && --pending[d->id()] == 0) ready.push_back(d);
    }
  }
  if (static_cast<int>(order->size()) != g.num_op_nodes()) {
    for (Node* n : g.op_nodes()) {
      if (pending[n->id()] > 0) {
        return errors::InvalidArgument("graph has a cycle through node '", n->name(), "' (",
                                       n->type_string(),
                                       "); cycles are only allowed through NextIteration");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace distflow
