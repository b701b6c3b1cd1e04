// tf.cond and tf.while_loop for the Python package: the C++ BuildCond
// (cc/cond.h) and BuildWhileLoop (cc/while_loop.h) with each branch, the
// loop's predicate and its body built by a Python function, which gets the
// sub-scope's name prefix, the ids of the ops it must follow (its pivot)
// and, for a loop, its inputs, and returns its output tensors. A Python
// error inside one is raised again, unchanged, once the builder returned.
#include "control_flow.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distflow/cc/cond.h"
#include "distflow/cc/while_loop.h"
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

std::vector<int> ControlIds(const Scope& scope) {
  std::vector<int> deps;
  for (const Operation& op : scope.control_deps()) deps.push_back(op.node()->id());
  return deps;
}

std::vector<TensorRef> Refs(const std::vector<Output>& outputs) {
  std::vector<TensorRef> refs;
  for (const Output& o : outputs) refs.emplace_back(o.node()->id(), o.index());
  return refs;
}

// Runs `fn` (prefix, control ids, input refs) -> result, keeping a Python
// error for the caller to raise once the builder has returned.
template <typename Result>
absl::Status CallPython(const py::function& fn, const Scope& scope,
                        const std::vector<Output>& inputs, const char* what, Result* result,
                        std::optional<py::error_already_set>* raised) {
  try {
    *result = fn(scope.name_prefix(), ControlIds(scope), Refs(inputs)).template cast<Result>();
  } catch (py::error_already_set& e) {
    raised->emplace(std::move(e));
    return errors::InvalidArgument("the while_loop's ", what, " raised in Python");
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterControlFlow(py::module_& m) {
  m.def("while_loop", [](std::shared_ptr<PyGraph> g, const std::vector<TensorRef>& inputs,
                         py::function cond_fn, py::function body_fn, const std::string& prefix,
                         int64_t parallel_iterations) {
    if (parallel_iterations < 1) {
      ThrowIfError(errors::InvalidArgument("while_loop: parallel_iterations must be positive, got ",
                                           parallel_iterations));
    }
    const Scope scope = g->BuilderScope(prefix, "", {});
    std::vector<Output> loop_vars;
    for (auto [id, index] : inputs) loop_vars.push_back(g->OutputOf(id, index));
    std::optional<py::error_already_set> raised;
    PyGraph* graph = g.get();
    auto cond = [&](const Scope& s, const std::vector<Output>& in, Output* out) -> absl::Status {
      TensorRef ref;
      DF_RETURN_IF_ERROR(CallPython(cond_fn, s, in, "cond", &ref, &raised));
      *out = graph->OutputOf(ref.first, ref.second);
      return absl::OkStatus();
    };
    auto body = [&](const Scope& s, const std::vector<Output>& in,
                    std::vector<Output>* out) -> absl::Status {
      std::vector<TensorRef> refs;
      DF_RETURN_IF_ERROR(CallPython(body_fn, s, in, "body", &refs, &raised));
      for (auto [id, index] : refs) out->push_back(graph->OutputOf(id, index));
      return absl::OkStatus();
    };
    OutputList outputs;
    absl::Status s =
        ops::BuildWhileLoop(scope, loop_vars, cond, body, prefix, &outputs, parallel_iterations);
    if (raised) {
      if (!g->root().ok()) g->root().TakeStatus().IgnoreError();
      throw std::move(*raised);
    }
    g->ThrowIfBuilderFailed();
    ThrowIfError(s);
    return Refs(outputs);
  });

  m.def("cond", [](std::shared_ptr<PyGraph> g, TensorRef pred, py::function then_fn,
                   py::function else_fn, const std::string& prefix) {
    const Scope scope = g->BuilderScope(prefix, "", {});
    std::optional<py::error_already_set> raised;
    OutputList outputs;
    absl::Status s = ops::BuildCond(scope, g->OutputOf(pred.first, pred.second), {},
                                    PythonBranch(g.get(), then_fn, &raised),
                                    PythonBranch(g.get(), else_fn, &raised), &outputs);
    if (raised) {
      if (!g->root().ok()) g->root().TakeStatus().IgnoreError();
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
