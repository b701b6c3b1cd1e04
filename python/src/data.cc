// tf.data pipelines for the Python package: distflow._distflow.Dataset
// wraps the C++ Dataset builder (cc/dataset.h); each method adds one dataset
// node and returns the new Dataset. Errors raise the distflow.errors class
// of the builder's status.
#include "data.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distflow/cc/dataset.h"
#include "graph.h"
#include "status.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

using TensorRef = std::pair<int, int>;

class PyDataset {
 public:
  PyDataset(std::shared_ptr<PyGraph> g, Dataset d) : graph_(std::move(g)), dataset_(std::move(d)) {
    graph_->ThrowIfBuilderFailed();
  }

  template <typename Fn>
  PyDataset Then(Fn fn) const {
    return PyDataset(graph_, fn(dataset_));
  }

  // (handle, initializer id, next tensors)
  py::tuple MakeIterator(const std::string& shared_name) const {
    DatasetIterator it = dataset_.MakeIterator(shared_name);
    graph_->ThrowIfBuilderFailed();
    std::vector<TensorRef> next;
    for (const Output& o : it.next) next.emplace_back(o.node()->id(), o.index());
    return py::make_tuple(TensorRef(it.handle.node()->id(), it.handle.index()),
                          it.initializer.node()->id(), next);
  }

  const Dataset& dataset() const { return dataset_; }
  const std::shared_ptr<PyGraph>& graph() const { return graph_; }

 private:
  std::shared_ptr<PyGraph> graph_;
  Dataset dataset_;
};

}  // namespace

void RegisterData(py::module_& m) {
  py::class_<PyDataset>(m, "Dataset")
      .def("shuffle",
           [](const PyDataset& d, int64_t buffer, int64_t seed, int64_t seed2, bool reshuffle) {
             return d.Then(
                 [&](const Dataset& x) { return x.Shuffle(buffer, seed, seed2, reshuffle); });
           })
      .def("batch",
           [](const PyDataset& d, int64_t n, bool drop) {
             return d.Then([&](const Dataset& x) { return x.Batch(n, drop); });
           })
      .def("repeat",
           [](const PyDataset& d, int64_t n) {
             return d.Then([&](const Dataset& x) { return x.Repeat(n); });
           })
      .def("take", [](const PyDataset& d,
                      int64_t n) { return d.Then([&](const Dataset& x) { return x.Take(n); }); })
      .def("skip", [](const PyDataset& d,
                      int64_t n) { return d.Then([&](const Dataset& x) { return x.Skip(n); }); })
      .def("prefetch",
           [](const PyDataset& d, int64_t n) {
             return d.Then([&](const Dataset& x) { return x.Prefetch(n); });
           })
      .def("map",
           [](const PyDataset& d, const std::string& function,
              const std::vector<TensorRef>& captured, const std::vector<int>& types,
              const std::vector<std::optional<std::vector<int64_t>>>& shapes,
              int64_t num_parallel_calls) {
             ops::DatasetStructure structure;
             for (int t : types) structure.types.push_back(static_cast<DataType>(t));
             for (const auto& s : shapes) {
               structure.shapes.push_back(s ? PartialTensorShape(absl::Span<const int64_t>(*s))
                                            : PartialTensorShape());
             }
             std::vector<Output> args;
             for (auto [id, index] : captured) args.push_back(d.graph()->OutputOf(id, index));
             return d.Then([&](const Dataset& x) {
               return x.Map(function, args, structure, num_parallel_calls);
             });
           })
      // (dtype enums, shapes: a list of dims, -1 unknown, or None) per component.
      .def("element_spec",
           [](const PyDataset& d) {
             const ops::DatasetStructure& s = d.dataset().structure();
             std::vector<int> types(s.types.begin(), s.types.end());
             py::list shapes;
             for (const PartialTensorShape& shape : s.shapes) {
               if (shape.unknown_rank()) {
                 shapes.append(py::none());
               } else {
                 shapes.append(py::cast(
                     std::vector<int64_t>(shape.dim_sizes().begin(), shape.dim_sizes().end())));
               }
             }
             return py::make_tuple(types, shapes);
           })
      .def("make_iterator", &PyDataset::MakeIterator);
  m.def("dataset_from_tensor_slices",
        [](std::shared_ptr<PyGraph> g, const std::vector<TensorRef>& components,
           const std::string& prefix) {
          std::vector<Output> outputs;
          for (auto [id, index] : components) outputs.push_back(g->OutputOf(id, index));
          const Scope scope = g->BuilderScope(prefix, "", {});
          Dataset d = Dataset::FromTensorSlices(scope, outputs);
          return PyDataset(g, std::move(d));
        });
  m.def("dataset_range", [](std::shared_ptr<PyGraph> g, int64_t start, int64_t stop, int64_t step,
                            const std::string& prefix) {
    const Scope scope = g->BuilderScope(prefix, "", {});
    Dataset d = Dataset::Range(scope, start, stop, step);
    return PyDataset(g, std::move(d));
  });
  m.def("dataset_zip", [](std::shared_ptr<PyGraph> g, const std::vector<const PyDataset*>& parts,
                          const std::string& prefix) {
    std::vector<Dataset> datasets;
    for (const PyDataset* p : parts) datasets.push_back(p->dataset());
    const Scope scope = g->BuilderScope(prefix, "", {});
    Dataset d = Dataset::Zip(scope, datasets);
    return PyDataset(g, std::move(d));
  });
}

}  // namespace python
}  // namespace distflow
