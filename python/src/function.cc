// Python functions traced into graph functions: graph_to_function(graph,
// name, arg ids, output refs) turns a graph Python traced a function into
// (its Placeholders the arguments) into a serialized FunctionDef
// (graph/graph_to_function.h); add_function(graph, fdef) puts one into a
// graph's library, once (the same definition again is a no-op, another
// definition under the same name InvalidArgument).
#include "function.h"

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/graph/graph_to_function.h"
#include "google/protobuf/util/message_differencer.h"
#include "graph.h"
#include "status.h"

namespace py = pybind11;

namespace distflow {
namespace python {

void RegisterFunction(py::module_& m) {
  m.def("graph_to_function",
        [](std::shared_ptr<PyGraph> g, const std::string& name, const std::vector<int>& arg_ids,
           const std::vector<std::pair<int, int>>& outputs) {
          std::vector<const Node*> args;
          for (int id : arg_ids) args.push_back(g->NodeById(id));
          std::vector<GraphTensor> rets;
          for (auto [id, index] : outputs) rets.emplace_back(g->NodeById(id), index);
          absl::StatusOr<FunctionDef> f = GraphToFunctionDef(*g->graph(), name, args, rets);
          ThrowIfError(f.status());
          return py::bytes(f->SerializeAsString());
        });
  m.def("add_function", [](std::shared_ptr<PyGraph> g, const py::bytes& serialized) {
    FunctionDef f;
    if (!f.ParseFromString(std::string(serialized))) {
      ThrowIfError(errors::InvalidArgument("not a serialized FunctionDef"));
    }
    FunctionDefLibrary library = g->graph()->library();
    for (const FunctionDef& known : library.function()) {
      if (known.signature().name() != f.signature().name()) continue;
      if (google::protobuf::util::MessageDifferencer::Equals(known, f)) return;
      ThrowIfError(errors::InvalidArgument("the graph's library has another function named '",
                                           f.signature().name(), "'"));
    }
    *library.add_function() = std::move(f);
    ThrowIfError(g->graph()->set_library(library));
  });
}

}  // namespace python
}  // namespace distflow
