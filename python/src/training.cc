// The training builders as Python sees them: symbolic gradients, resource
// variables, the optimizers, Saver and checkpoint reading. Each call builds
// through the C++ builder in a scope PyGraph gives it and raises the
// builder's error (clearing it from the scope, so that building goes on).
#include "training.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/training/adam.h"
#include "distflow/training/gradient_descent.h"
#include "distflow/training/momentum.h"
#include "distflow/training/optimizer.h"
#include "distflow/training/saver.h"
#include "distflow/core/status.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/gradients/gradients.h"
#include "numpy_tensor.h"
#include "session.h"
#include "status.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

using TensorRef = std::pair<int, int>;

std::optional<TensorRef> RefOf(const Output& o) {
  if (o.node() == nullptr) return std::nullopt;
  return TensorRef(o.node()->id(), o.index());
}

LearningRate LearningRateOf(const PyGraph& g, py::handle lr) {
  if (py::isinstance<py::tuple>(lr)) {
    auto [id, index] = lr.cast<TensorRef>();
    return LearningRate(g.OutputOf(id, index));
  }
  return LearningRate(lr.cast<double>());
}

// An optimizer and the graph it builds in.
class PyOptimizer {
 public:
  PyOptimizer(std::shared_ptr<PyGraph> g, const std::string& kind, const std::string& prefix,
              py::handle learning_rate, const py::dict& params)
      : graph_(std::move(g)) {
    const Scope scope = graph_->BuilderScope(prefix, "", {});
    const LearningRate lr = LearningRateOf(*graph_, learning_rate);
    auto param = [&](const char* name, double fallback) {
      return params.contains(name) ? params[name].cast<double>() : fallback;
    };
    if (kind == "GradientDescent") {
      optimizer_ = std::make_unique<GradientDescentOptimizer>(scope, lr);
    } else if (kind == "Momentum") {
      optimizer_ = std::make_unique<MomentumOptimizer>(
          scope, lr, param("momentum", 0.9),
          params.contains("use_nesterov") && params["use_nesterov"].cast<bool>());
    } else if (kind == "Adam") {
      optimizer_ = std::make_unique<AdamOptimizer>(scope, lr, param("beta1", 0.9),
                                                   param("beta2", 0.999), param("epsilon", 1e-8));
    } else {
      throw py::value_error(absl::StrCat("unknown optimizer '", kind, "'"));
    }
  }

  std::vector<std::pair<std::optional<TensorRef>, int>> ComputeGradients(
      TensorRef loss, const std::vector<int>& var_ids) {
    std::vector<Variable> vars;
    for (int id : var_ids) vars.push_back(graph_->VariableById(id));
    auto result = optimizer_->ComputeGradients(graph_->OutputOf(loss.first, loss.second), vars);
    graph_->ThrowIfBuilderFailed();
    ThrowIfError(result.status());
    std::vector<std::pair<std::optional<TensorRef>, int>> out;
    for (const GradAndVar& gv : *result) {
      out.emplace_back(RefOf(gv.gradient), gv.variable.handle().node()->id());
    }
    return out;
  }

  int ApplyGradients(const std::vector<std::pair<std::optional<TensorRef>, int>>& grads_and_vars,
                     int global_step_id) {
    std::vector<GradAndVar> gvs;
    for (const auto& [grad, var_id] : grads_and_vars) {
      GradAndVar gv;
      if (grad) gv.gradient = graph_->OutputOf(grad->first, grad->second);
      gv.variable = graph_->VariableById(var_id);
      gvs.push_back(gv);
    }
    const Variable* step = global_step_id >= 0 ? &graph_->VariableById(global_step_id) : nullptr;
    auto op = optimizer_->ApplyGradients(gvs, step);
    graph_->ThrowIfBuilderFailed();
    ThrowIfError(op.status());
    for (const Variable& v : optimizer_->variables()) graph_->AddVariable(v);
    return op->node()->id();
  }

  std::vector<int> Initializers() const {
    std::vector<int> ids;
    for (const Operation& op : optimizer_->initializers()) ids.push_back(op.node()->id());
    return ids;
  }
  std::vector<int> Variables() const {
    std::vector<int> ids;
    for (const Variable& v : optimizer_->variables()) ids.push_back(v.handle().node()->id());
    return ids;
  }

 private:
  std::shared_ptr<PyGraph> graph_;
  std::unique_ptr<Optimizer> optimizer_;
};

class PySaver {
 public:
  PySaver(std::shared_ptr<PyGraph> g, const std::vector<int>& var_ids,
          const std::vector<std::string>& names, const std::string& prefix, int max_to_keep)
      : graph_(std::move(g)) {
    std::vector<Saver::Variable> vars;
    for (size_t i = 0; i < var_ids.size(); ++i) {
      const Variable& v = graph_->VariableById(var_ids[i]);
      TensorShape shape;
      if (!v.shape().AsTensorShape(&shape)) {
        ThrowIfError(
            errors::InvalidArgument("variable '", v.name(), "' has no fully known shape to save"));
      }
      vars.push_back({names[i], v.handle(), v.dtype(), shape});
    }
    saver_ =
        std::make_unique<Saver>(graph_->BuilderScope(prefix, "", {}), std::move(vars), max_to_keep);
    graph_->ThrowIfBuilderFailed();
  }

  std::string Save(const PySession& session, const std::string& dir, int64_t step) {
    absl::StatusOr<std::string> prefix;
    {
      py::gil_scoped_release release;
      prefix = saver_->Save(session.client(), dir, step);
    }
    return ValueOrThrow(std::move(prefix));
  }

  void Restore(const PySession& session, const std::string& prefix) {
    absl::Status s;
    {
      py::gil_scoped_release release;
      s = saver_->Restore(session.client(), prefix);
    }
    ThrowIfError(s);
  }

 private:
  std::shared_ptr<PyGraph> graph_;
  std::unique_ptr<Saver> saver_;
};

}  // namespace

void RegisterTraining(py::module_& m) {
  m.def("gradients",
        [](std::shared_ptr<PyGraph> g, const std::vector<TensorRef>& ys,
           const std::vector<TensorRef>& xs, py::object grad_ys, const std::string& prefix) {
          const Scope scope = g->BuilderScope(prefix, "", {});
          std::vector<Output> outputs, inputs, grad_inputs, grads;
          for (auto [id, index] : ys) outputs.push_back(g->OutputOf(id, index));
          for (auto [id, index] : xs) inputs.push_back(g->OutputOf(id, index));
          absl::Status s;
          if (grad_ys.is_none()) {
            s = AddSymbolicGradients(scope, outputs, inputs, &grads);
          } else {
            for (auto [id, index] : grad_ys.cast<std::vector<TensorRef>>()) {
              grad_inputs.push_back(g->OutputOf(id, index));
            }
            s = AddSymbolicGradients(scope, outputs, inputs, grad_inputs, &grads);
          }
          g->ThrowIfBuilderFailed();
          ThrowIfError(s);
          std::vector<std::optional<TensorRef>> result;
          for (const Output& o : grads) result.push_back(RefOf(o));
          return result;
        });
  m.def("variable", [](std::shared_ptr<PyGraph> g, const std::string& name, TensorRef initial,
                       const std::string& device, const std::vector<int>& control_ids) {
    const Scope scope = g->VariableScope(name, device, control_ids);
    const Variable v(scope, g->OutputOf(initial.first, initial.second));
    g->ThrowIfBuilderFailed();
    g->AddVariable(v);
    return std::make_pair(v.handle().node()->id(), v.initializer().node()->id());
  });
  py::class_<PyOptimizer>(m, "Optimizer")
      .def(py::init<std::shared_ptr<PyGraph>, const std::string&, const std::string&, py::handle,
                    const py::dict&>())
      .def("compute_gradients", &PyOptimizer::ComputeGradients)
      .def("apply_gradients", &PyOptimizer::ApplyGradients)
      .def("initializers", &PyOptimizer::Initializers)
      .def("variables", &PyOptimizer::Variables);
  py::class_<PySaver>(m, "Saver")
      .def(py::init<std::shared_ptr<PyGraph>, const std::vector<int>&,
                    const std::vector<std::string>&, const std::string&, int>())
      .def("save", &PySaver::Save)
      .def("restore", &PySaver::Restore);
  m.def("latest_checkpoint", [](const std::string& dir) -> py::object {
    absl::StatusOr<std::string> prefix = Saver::LatestCheckpoint(dir);
    if (absl::IsNotFound(prefix.status())) return py::none();
    return py::str(ValueOrThrow(std::move(prefix)));
  });
  m.def("checkpoint_entries", [](const std::string& prefix) {
    std::unique_ptr<BundleReader> reader = ValueOrThrow(BundleReader::Open(prefix));
    py::dict entries;
    for (const std::string& name : reader->Names()) {
      const BundleEntryProto* entry = reader->Find(name);
      py::list dims;
      for (const auto& d : entry->shape().dim()) dims.append(d.size());
      entries[py::str(name)] = py::make_tuple(static_cast<int>(entry->dtype()), dims);
    }
    return entries;
  });
  m.def("checkpoint_tensor", [](const std::string& prefix, const std::string& name) {
    std::unique_ptr<BundleReader> reader = ValueOrThrow(BundleReader::Open(prefix));
    const BundleEntryProto* entry = reader->Find(name);
    if (entry == nullptr) {
      ThrowIfError(errors::NotFound("checkpoint '", prefix, "' has no tensor '", name, "'"));
    }
    return TensorToNumpy(ValueOrThrow(reader->Read(name, entry->dtype())));
  });
}

}  // namespace python
}  // namespace distflow
