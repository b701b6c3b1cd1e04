// PyGraph: the graph Python builds, as distflow._distflow.Graph. It owns a
// root Scope (the Graph, its ShapeRefiner and the name table the C++
// builders use). Python names its own ops (TensorFlow's unique-name rules
// live in distflow/framework/ops.py) and adds them through AddOp; C++
// builders (gradients, variables, optimizers) run in sub-scopes whose prefix
// Python chose. So that the two never pick the same name, every top-level
// name Python uses is reserved in the root scope's table, and Python learns
// the names of the nodes a builder added (NodesSince).
// Nodes are addressed by id. Not thread-safe: Python calls it under the GIL.
#ifndef DISTFLOW_PYTHON_GRAPH_H_
#define DISTFLOW_PYTHON_GRAPH_H_

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/training/variable.h"

namespace distflow {
namespace python {

class PyGraph {
 public:
  PyGraph();

  const Scope& root() const { return root_; }
  Graph* graph() const { return root_.graph(); }

  // The node with `id`; raises ValueError when there is none.
  Node* NodeById(int id) const;
  Output OutputOf(int id, int index) const;

  // A scope for a C++ builder: ops named "<prefix>/...", requesting
  // `device`, after `control_ids`. REQUIRES: Python made `prefix` unique.
  Scope BuilderScope(const std::string& prefix, const std::string& device,
                     const std::vector<int>& control_ids);
  // A scope whose next op is named exactly `name` (Python made it unique).
  Scope NamedScope(const std::string& name, const std::string& device,
                   const std::vector<int>& control_ids);

  // Adds op `op_type` named `name`. `inputs` holds one entry per input arg:
  // an (id, index) pair, or a list of them for a list arg. `attrs` maps
  // attr names to Python values; attrs the inputs determine are inferred.
  // Raises the distflow.errors class of the failure, naming the node.
  int AddOp(const std::string& op_type, const std::string& name, const pybind11::list& inputs,
            const pybind11::dict& attrs, const std::string& device,
            const std::vector<int>& control_ids);

  // Raises the error a C++ builder recorded in the root scope's status,
  // clearing it so that building goes on.
  void ThrowIfBuilderFailed() const;

  // Reserves the first component of `name` in the root scope's name table.
  void ReserveName(absl::string_view name);
  // Ids of the nodes added at or after `first_id`, in id order.
  std::vector<int> NodesSince(int first_id) const;
  int next_id() const { return graph()->num_node_ids(); }

  // Variables built while `placement` is set are built in it (a
  // ParameterServerStrategy's variable scope: round-robin on the ps tasks);
  // nullopt: at the root.
  void SetVariablePlacement(std::optional<Scope> placement) {
    variable_placement_ = std::move(placement);
  }
  // A scope for the variable `name` (see NamedScope).
  Scope VariableScope(const std::string& name, const std::string& device,
                      const std::vector<int>& control_ids);

  // The resource variables made by the C++ Variable builder (Python's and
  // the optimizers'), by the id of their VarHandleOp.
  void AddVariable(const Variable& v) { variables_[v.handle().node()->id()] = v; }
  const Variable& VariableById(int handle_id) const;

 private:
  // `scope` requesting `device` (when not empty), after `control_ids`.
  Scope Decorate(Scope scope, const std::string& device, const std::vector<int>& control_ids) const;

  Scope root_;
  absl::flat_hash_set<std::string> reserved_;
  absl::flat_hash_map<int, Variable> variables_;
  std::optional<Scope> variable_placement_;
};

void RegisterGraph(pybind11::module_& m);

}  // namespace python
}  // namespace distflow

#endif  // DISTFLOW_PYTHON_GRAPH_H_
