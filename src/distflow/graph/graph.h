// The in-memory dataflow graph: nodes (each with its NodeDef, op and resolved
// input/output types) and edges (data edges carry an output index and an
// input index; control edges use kControlSlot on both ends). Every graph has
// a SOURCE (id 0) and a SINK (id 1) node; converters keep every op node
// reachable from SOURCE and reaching SINK. A Graph is not thread-safe; const
// methods may be called concurrently.
//
// Memory: a node's NodeDef lives on the graph's protobuf arena and its edges
// in one deque, so a node costs its NodeDef plus a few dozen bytes, with no
// allocation per edge; the arena is freed with the graph (a removed node's
// NodeDef stays there until then).
#ifndef DISTFLOW_GRAPH_GRAPH_H_
#define DISTFLOW_GRAPH_GRAPH_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "distflow/framework/function.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/op_registry.h"
#include "distflow/graph.pb.h"
#include "distflow/graph/tensor_id.h"
#include "google/protobuf/arena.h"

namespace distflow {

class Edge;
class Graph;

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_->name(); }
  const std::string& type_string() const { return def_->op(); }
  const NodeDef& def() const { return *def_; }
  const OpDef& op_def() const { return *op_def_; }
  AttrSlice attrs() const { return AttrSlice(*def_); }

  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }

  // The device the user asked for (NodeDef.device), possibly partial.
  const std::string& requested_device() const { return def_->device(); }
  void set_requested_device(const std::string& device) { def_->set_device(device); }
  // The device the placer chose; empty before placement.
  const std::string& assigned_device_name() const { return assigned_device_; }
  void set_assigned_device_name(const std::string& device) { assigned_device_ = device; }

  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }
  // The edge feeding data input `idx`; NotFound when missing.
  absl::Status input_edge(int idx, const Edge** edge) const;
  absl::Status input_node(int idx, const Node** node) const;

  bool IsSource() const { return id_ == 0; }
  bool IsSink() const { return id_ == 1; }
  bool IsOp() const { return id_ > 1; }
  bool IsStateful() const { return op_def_->is_stateful(); }
  bool IsConstant() const { return type_string() == "Const"; }
  bool IsSend() const { return type_string() == "_Send" || type_string() == "_HostSend"; }
  bool IsRecv() const { return type_string() == "_Recv" || type_string() == "_HostRecv"; }
  bool IsNextIteration() const {
    return type_string() == "NextIteration" || type_string() == "RefNextIteration";
  }
  bool IsMerge() const { return type_string() == "Merge" || type_string() == "RefMerge"; }

  template <typename T>
  void AddAttr(absl::string_view name, T&& value) {
    AddNodeAttr(name, std::forward<T>(value), def_);
  }
  void ClearAttr(absl::string_view name) { def_->mutable_attr()->erase(std::string(name)); }

 private:
  friend class Graph;
  Node() = default;

  int id_ = -1;
  NodeDef* def_ = nullptr;  // on the graph's arena
  const OpDef* op_def_ = nullptr;
  DataTypeVector input_types_, output_types_;
  std::string assigned_device_;
  std::vector<const Edge*> in_edges_, out_edges_;
};

class Edge {
 public:
  Node* src() const { return src_; }
  Node* dst() const { return dst_; }
  int id() const { return id_; }
  int src_output() const { return src_output_; }
  int dst_input() const { return dst_input_; }
  bool IsControlEdge() const { return src_output_ == kControlSlot; }

 private:
  friend class Graph;
  Node* src_ = nullptr;
  Node* dst_ = nullptr;
  int id_ = -1;
  int src_output_ = 0;
  int dst_input_ = 0;
};

class Graph {
 public:
  explicit Graph(const OpRegistry* ops = OpRegistry::Global());
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  static constexpr int kSourceId = 0;
  static constexpr int kSinkId = 1;

  Node* source_node() const { return nodes_[kSourceId]; }
  Node* sink_node() const { return nodes_[kSinkId]; }

  // Adds a node for a copy of `node_def` (its inputs are not turned into
  // edges). Fills default attrs and resolves input/output types;
  // Unimplemented for an op that is neither registered nor a function of the
  // graph's library, and InvalidArgument for bad attrs, naming the node.
  absl::StatusOr<Node*> AddNode(const NodeDef& node_def);
  // Removes the node and all its edges. REQUIRES: node is an op node.
  void RemoveNode(Node* node);

  // REQUIRES: indices are in range for data edges.
  const Edge* AddEdge(Node* src, int src_output, Node* dst, int dst_input);
  // Adds src -> dst unless such a control edge already exists.
  const Edge* AddControlEdge(Node* src, Node* dst);
  void RemoveEdge(const Edge* edge);

  // Number of live nodes / edges, including SOURCE, SINK and their edges.
  int num_nodes() const { return num_nodes_; }
  int num_op_nodes() const { return num_nodes_ - 2; }
  int num_edges() const { return num_edges_; }
  // One past the largest node id ever used.
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  int num_edge_ids() const { return static_cast<int>(edges_.size()); }
  // nullptr for a removed or never-used id.
  Node* FindNodeId(int id) const { return id >= 0 && id < num_node_ids() ? nodes_[id] : nullptr; }

  // Live nodes in id order (including SOURCE and SINK) / op nodes only.
  std::vector<Node*> nodes() const;
  std::vector<Node*> op_nodes() const;
  std::vector<const Edge*> edges() const;

  // Writes op nodes in id order. Inputs come from the edges: data inputs in
  // input order, then "^src" for each control edge. The device is the
  // assigned device when set, else the requested one.
  void ToGraphDef(GraphDef* graph_def) const;

  // A node name not used yet, "prefix/_N".
  std::string NewName(absl::string_view prefix);

  const VersionDef& versions() const { return versions_; }
  void set_versions(const VersionDef& v) { versions_ = v; }
  // The function library (empty when the graph has none). A node whose op
  // names one of its functions is a function call.
  const FunctionDefLibrary& library() const;
  // Replaces the library; the library's errors (see
  // FunctionLibraryDefinition::Create). REQUIRES: no node calls a function.
  absl::Status set_library(const FunctionDefLibrary& lib);
  // nullptr when the graph has no functions.
  const std::shared_ptr<const FunctionLibraryDefinition>& flib_def() const { return flib_def_; }
  void set_flib_def(std::shared_ptr<const FunctionLibraryDefinition> flib_def) {
    flib_def_ = std::move(flib_def);
  }
  const OpRegistry* op_registry() const { return ops_; }

  // Makes this graph a copy of `src` (node ids are preserved).
  void Copy(const Graph& src);
  // Exchanges the contents (nodes, edges, versions, library, registry) of
  // the two graphs; Node and Edge pointers stay valid and move with them.
  void Swap(Graph* other);

 private:
  // A node whose NodeDef is a copy of `def` on this graph's arena.
  Node* AllocateNode(const NodeDef& def, const OpDef* op_def, DataTypeVector in,
                     DataTypeVector out);

  const OpRegistry* ops_;
  // Declared before the nodes: it is destroyed after them.
  std::unique_ptr<google::protobuf::Arena> arena_;
  std::vector<Node*> nodes_;  // by id; nullptr after removal
  std::vector<Edge*> edges_;  // by id; nullptr after removal
  std::vector<std::unique_ptr<Node>> node_storage_;
  std::deque<Edge> edge_storage_;
  int num_nodes_ = 0;
  int num_edges_ = 0;
  int name_counter_ = 0;
  VersionDef versions_;
  // Shared by copies: call nodes' OpDefs point into it.
  std::shared_ptr<const FunctionLibraryDefinition> flib_def_;
};

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_GRAPH_H_
