#include "distflow/graph/graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

const OpDef& SourceSinkOpDef(bool source) {
  static const OpDef* defs = [] {
    auto* d = new OpDef[2];
    d[0].set_name("_SOURCE");
    d[1].set_name("_SINK");
    return d;
  }();
  return defs[source ? 0 : 1];
}

void EraseEdge(std::vector<const Edge*>* v, const Edge* e) {
  auto it = std::find(v->begin(), v->end(), e);
  DF_CHECK(it != v->end());
  *it = v->back();
  v->pop_back();
}

}  // namespace

absl::Status Node::input_edge(int idx, const Edge** edge) const {
  for (const Edge* e : in_edges_) {
    if (e->dst_input() == idx) {
      *edge = e;
      return absl::OkStatus();
    }
  }
  return errors::NotFound("node '", name(), "' has no edge into input ", idx);
}

absl::Status Node::input_node(int idx, const Node** node) const {
  const Edge* e = nullptr;
  DF_RETURN_IF_ERROR(input_edge(idx, &e));
  *node = e->src();
  return absl::OkStatus();
}

Graph::Graph(const OpRegistry* ops)
    : ops_(ops), arena_(std::make_unique<google::protobuf::Arena>()) {
  NodeDef source;
  source.set_name("_SOURCE");
  source.set_op("_SOURCE");
  NodeDef sink;
  sink.set_name("_SINK");
  sink.set_op("_SINK");
  AllocateNode(source, &SourceSinkOpDef(true), {}, {});
  AllocateNode(sink, &SourceSinkOpDef(false), {}, {});
  AddControlEdge(source_node(), sink_node());
  versions_.set_producer(1);
}

Graph::~Graph() = default;

Node* Graph::AllocateNode(const NodeDef& def, const OpDef* op_def, DataTypeVector in,
                          DataTypeVector out) {
  auto node = std::unique_ptr<Node>(new Node);
  node->id_ = static_cast<int>(nodes_.size());
  node->def_ = google::protobuf::Arena::CreateMessage<NodeDef>(arena_.get());
  *node->def_ = def;
  node->op_def_ = op_def;
  node->input_types_ = std::move(in);
  node->output_types_ = std::move(out);
  Node* raw = node.get();
  nodes_.push_back(raw);
  node_storage_.push_back(std::move(node));
  ++num_nodes_;
  return raw;
}

absl::StatusOr<Node*> Graph::AddNode(const NodeDef& node_def) {
  const OpDef* op_def = nullptr;
  absl::Status s = ops_->LookUpOpDef(node_def.op(), &op_def);
  if (!s.ok() && flib_def_ != nullptr) {
    if (const FunctionDef* f = flib_def_->Find(node_def.op())) {
      op_def = &f->signature();
      s = absl::OkStatus();
    }
  }
  if (!s.ok()) {
    return errors::Unimplemented("op '", node_def.op(), "' is not registered (",
                                 FormatNodeForError(node_def), ")");
  }
  // Types are resolved on the NodeDef with its defaults, which the copy on
  // the arena gets; a failure leaves nothing behind but arena bytes.
  Node* node = AllocateNode(node_def, op_def, {}, {});
  AddDefaultsToNodeDef(*op_def, node->def_);
  s = InOutTypesForNode(*node->def_, *op_def, &node->input_types_, &node->output_types_);
  if (!s.ok()) {
    nodes_.pop_back();
    node_storage_.pop_back();
    --num_nodes_;
    return s;
  }
  return node;
}

void Graph::RemoveNode(Node* node) {
  DF_CHECK(node->IsOp());
  while (!node->in_edges_.empty()) RemoveEdge(node->in_edges_.back());
  while (!node->out_edges_.empty()) RemoveEdge(node->out_edges_.back());
  nodes_[node->id_] = nullptr;
  --num_nodes_;
}

const Edge* Graph::AddEdge(Node* src, int src_output, Node* dst, int dst_input) {
  Edge* raw = &edge_storage_.emplace_back();
  raw->src_ = src;
  raw->dst_ = dst;
  raw->src_output_ = src_output;
  raw->dst_input_ = dst_input;
  raw->id_ = static_cast<int>(edges_.size());
  edges_.push_back(raw);
  src->out_edges_.push_back(raw);
  dst->in_edges_.push_back(raw);
  ++num_edges_;
  return raw;
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  for (const Edge* e : dst->in_edges_) {
    if (e->IsControlEdge() && e->src() == src) return e;
  }
  return AddEdge(src, kControlSlot, dst, kControlSlot);
}

void Graph::RemoveEdge(const Edge* edge) {
  EraseEdge(&edge->src_->out_edges_, edge);
  EraseEdge(&edge->dst_->in_edges_, edge);
  edges_[edge->id_] = nullptr;
  --num_edges_;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(num_nodes_);
  for (Node* n : nodes_) {
    if (n != nullptr) out.push_back(n);
  }
  return out;
}

std::vector<Node*> Graph::op_nodes() const {
  std::vector<Node*> out;
  out.reserve(num_nodes_);
  for (Node* n : nodes_) {
    if (n != nullptr && n->IsOp()) out.push_back(n);
  }
  return out;
}

std::vector<const Edge*> Graph::edges() const {
  std::vector<const Edge*> out;
  out.reserve(num_edges_);
  for (const Edge* e : edges_) {
    if (e != nullptr) out.push_back(e);
  }
  return out;
}

void Graph::ToGraphDef(GraphDef* graph_def) const {
  graph_def->Clear();
  *graph_def->mutable_versions() = versions_;
  if (library().function_size() > 0 || library().gradient_size() > 0) {
    *graph_def->mutable_library() = library();
  }
  std::vector<const Edge*> data_inputs;
  std::vector<const Edge*> control_inputs;
  for (const Node* n : nodes_) {
    if (n == nullptr || !n->IsOp()) continue;
    NodeDef* def = graph_def->add_node();
    *def = *n->def_;
    if (!n->assigned_device_.empty()) def->set_device(n->assigned_device_);
    def->clear_input();
    data_inputs.assign(n->num_inputs(), nullptr);
    control_inputs.clear();
    for (const Edge* e : n->in_edges_) {
      if (e->IsControlEdge()) {
        if (e->src()->IsOp()) control_inputs.push_back(e);
      } else if (e->dst_input() < n->num_inputs()) {
        data_inputs[e->dst_input()] = e;
      }
    }
    std::sort(control_inputs.begin(), control_inputs.end(),
              [](const Edge* a, const Edge* b) { return a->src()->id() < b->src()->id(); });
    for (const Edge* e : data_inputs) {
      if (e == nullptr) continue;
      def->add_input(e->src_output() == 0 ? e->src()->name()
                                          : absl::StrCat(e->src()->name(), ":", e->src_output()));
    }
    for (const Edge* e : control_inputs) def->add_input(absl::StrCat("^", e->src()->name()));
  }
}

const FunctionDefLibrary& Graph::library() const {
  static const FunctionDefLibrary* const kEmpty = new FunctionDefLibrary;
  return flib_def_ == nullptr ? *kEmpty : flib_def_->ToProto();
}

absl::Status Graph::set_library(const FunctionDefLibrary& lib) {
  if (lib.function_size() == 0 && lib.gradient_size() == 0) {
    flib_def_ = nullptr;
    return absl::OkStatus();
  }
  DF_ASSIGN_OR_RETURN(flib_def_, FunctionLibraryDefinition::Create(lib, ops_));
  return absl::OkStatus();
}

std::string Graph::NewName(absl::string_view prefix) {
  return absl::StrCat(prefix, "/_", name_counter_++);
}

void Graph::Copy(const Graph& src) {
  DF_CHECK(num_op_nodes() == 0);
  versions_ = src.versions_;
  flib_def_ = src.flib_def_;
  name_counter_ = src.name_counter_;
  // Keep ids identical: allocate placeholders for the removed ids too.
  std::vector<Node*> map(src.nodes_.size(), nullptr);
  map[kSourceId] = source_node();
  map[kSinkId] = sink_node();
  for (size_t id = 2; id < src.nodes_.size(); ++id) {
    const Node* n = src.nodes_[id];
    if (n == nullptr) {
      nodes_.push_back(nullptr);
      continue;
    }
    Node* copy = AllocateNode(*n->def_, n->op_def_, n->input_types_, n->output_types_);
    copy->assigned_device_ = n->assigned_device_;
    map[id] = copy;
  }
  for (const Edge* e : src.edges_) {
    if (e == nullptr) continue;
    Node* s = map[e->src()->id()];
    Node* d = map[e->dst()->id()];
    if (e->IsControlEdge() && s->IsSource() && d->IsSink()) continue;  // exists already
    AddEdge(s, e->src_output(), d, e->dst_input());
  }
}

void Graph::Swap(Graph* other) {
  std::swap(ops_, other->ops_);
  arena_.swap(other->arena_);
  nodes_.swap(other->nodes_);
  edges_.swap(other->edges_);
  node_storage_.swap(other->node_storage_);
  edge_storage_.swap(other->edge_storage_);
  std::swap(num_nodes_, other->num_nodes_);
  std::swap(num_edges_, other->num_edges_);
  std::swap(name_counter_, other->name_counter_);
  versions_.Swap(&other->versions_);
  std::swap(flib_def_, other->flib_def_);
}

}  // namespace distflow
