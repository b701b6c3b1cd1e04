// tf.cond for the Python package: the C++ BuildCond (cc/cond.h) with each
// branch built by a Python function, which gets the branch scope's name
// prefix and the ids of the ops the branch must follow (its pivot) and
// returns its output tensors. A Python error inside a branch is raised
// again, unchanged, once BuildCond has returned.
#include "control_flow.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distflow/cc/cond.h"
#include "distflow/core/status.h"
#include "graph.h"
#include "status.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

using TensorRef = std::pair<int, int>;

ops::BranchGraphBuilderFn PythonBranch(PyGraph* g, py::function fn,
                                       std::optional<py::error_already_set>* raised) {
  return [g, fn, raised](const Scope& scope, const std::vector<Output>& /*inputs*/,
                         std::vector<Output>* outputs) -> absl::Status {
    std::vector<int> deps;
    for (const Operation& op : scope.control_deps()) deps.push_back(op.node()->id());
    try {
      for (auto [id, index] : fn(scope.name_prefix(), deps).cast<std::vector<TensorRef>>()) {
        outputs->push_back(g->OutputOf(id, index));
      }
    } catch (py::error_already_set& e) {
      raised->emplace(std::move(e));
      return errors::InvalidArgument("a branch of the cond raised in Python");
    }
    return absl::OkStatus();
  };
}

}  // namespace

void RegisterControlFlow(py::module_& m) {
  m.def("cond", [](std::shared_ptr<PyGraph> g, TensorRef pred, py::function then_fn,
                   py::function else_fn, const std::string& prefix) {
    const Scope scope = g->BuilderScope(prefix, "", {});
    std::optional<py::error_already_set> raised;
    OutputList outputs;
    absl::Status s = ops::BuildCond(scope, g->OutputOf(pred.first, pred.second), {},
                                    PythonBranch(g.get(), then_fn, &raised),
                                    PythonBranch(g.get(), else_fn, &raised), &outputs);
    if (raised) {
      if (!g->root().ok()) g->root().TakeStatus();
      throw std::move(*raised);
    }
    g->ThrowIfBuilderFailed();
    ThrowIfError(s);
    std::vector<TensorRef> refs;
    for (const Output& o : outputs) refs.emplace_back(o.node()->id(), o.index());
    return refs;
  });
}

}  // namespace python
}  // namespace distflow
