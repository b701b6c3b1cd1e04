// NodeBuilder: adds one node to a Graph from the tensors that feed it, the
// way a client API builds graphs. Each Input call feeds the next input arg of
// the op (a single tensor, or a list for a `N * T` / type-list arg). Type
// attrs, list lengths (N) and type lists that the inputs determine are set
// from the producers' dtypes, defaults are filled from the OpDef, and the
// result is checked against it. Finalize either adds the node with all its
// edges or changes nothing; every error names the node.
// A NodeBuilder is a value; not thread-safe.
#ifndef DISTFLOW_GRAPH_NODE_BUILDER_H_
#define DISTFLOW_GRAPH_NODE_BUILDER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/op_registry.h"
#include "distflow/graph/graph.h"

namespace distflow {

class NodeBuilder {
 public:
  // One tensor feeding an input: output `index` of `node`.
  struct NodeOut {
    NodeOut() = default;
    NodeOut(Node* n, int i = 0) : node(n), index(i) {}  // NOLINT: implicit
    Node* node = nullptr;
    int index = 0;
  };

  // `name` is the new node's name, `op_name` the registered op it runs.
  NodeBuilder(absl::string_view name, absl::string_view op_name,
              const OpRegistry* registry = OpRegistry::Global());

  // Feeds the next input arg with one tensor.
  NodeBuilder& Input(Node* src_node, int src_index = 0);
  NodeBuilder& Input(NodeOut src);
  // Feeds the next input arg, which must be a list arg, with `src_list`.
  NodeBuilder& Input(absl::Span<const NodeOut> src_list);
  // Makes the node run only after `src_node`. Duplicates are dropped.
  NodeBuilder& ControlInput(Node* src_node);
  NodeBuilder& ControlInputs(absl::Span<Node* const> src_nodes);
  // The requested device, possibly partial ("/job:ps/task:0", "/cpu:0").
  NodeBuilder& Device(absl::string_view device_spec);

  // Sets attr `name`; a later call for the same name replaces the value.
  template <typename T>
  NodeBuilder& Attr(absl::string_view name, T&& value) {
    AddNodeAttr(name, std::forward<T>(value), &def_);
    return *this;
  }
  template <typename T>
  NodeBuilder& Attr(absl::string_view name, std::initializer_list<T> value) {
    AddNodeAttr(name, value, &def_);
    return *this;
  }

  // Adds the node and its edges to `graph` and stores it in `*created_node`
  // (when not null). Fails, leaving `graph` unchanged, with:
  //  - Unimplemented when the op is not registered;
  //  - InvalidArgument for an invalid node name, a missing (null) or
  //    out-of-range input, an input from another graph, the wrong number of
  //    inputs or a list where a single tensor is expected (or the reverse),
  //    inputs whose dtypes disagree with each other or with the op, and attrs
  //    ValidateNodeDef rejects.
  absl::Status Finalize(Graph* graph, Node** created_node) const;
  absl::StatusOr<Node*> Finalize(Graph* graph) const;

  const std::string& node_name() const { return def_.name(); }
  const std::string& op_name() const { return def_.op(); }

 private:
  // What one Input call fed.
  struct InputArg {
    bool is_list = false;
    std::vector<NodeOut> tensors;
  };

  // Builds the complete NodeDef: inferred attrs, inputs, defaults, checks.
  absl::Status BuildNodeDef(const Graph& graph, const OpDef& op_def, NodeDef* def) const;
  // Sets or checks the attrs input arg `arg_index` determines.
  absl::Status InferAttrsFromArg(const OpDef& op_def, int arg_index, NodeDef* def) const;

  NodeDef def_;
  const OpRegistry* registry_;
  std::vector<InputArg> inputs_;
  std::vector<Node*> control_inputs_;
};

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_NODE_BUILDER_H_
