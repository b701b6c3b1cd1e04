#include "session.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/common_runtime/timeline.h"
#include "distflow/core/status.h"
#include "interrupt.h"
#include "numpy_tensor.h"
#include "status.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

RunMetadata ParseRunMetadata(const py::bytes& serialized) {
  RunMetadata metadata;
  if (!metadata.ParseFromString(std::string(serialized))) {
    ThrowIfError(errors::InvalidArgument("not a serialized RunMetadata"));
  }
  return metadata;
}

}  // namespace

PySession::PySession(std::shared_ptr<PyGraph> graph, const std::string& target,
                     const std::string& config_proto)
    : graph_(std::move(graph)) {
  SessionOptions options;
  options.target = target;
  if (!config_proto.empty() && !options.config.ParseFromString(config_proto)) {
    ThrowIfError(errors::InvalidArgument("config is not a serialized ConfigProto"));
  }
  client_ = std::make_unique<ClientSession>(graph_->root(), options);
  ThrowIfError(client_->status());
}

py::tuple PySession::Run(const py::list& feeds, const py::list& fetches, const py::list& targets,
                         int64_t timeout_in_ms, int trace_level) {
  DrainReleasedArrays();
  ClientSession::FeedType feed_map;
  for (py::handle feed : feeds) {
    py::tuple t = feed.cast<py::tuple>();
    const Output out = graph_->OutputOf(t[0].cast<int>(), t[1].cast<int>());
    Tensor value;
    absl::Status s = NumpyToTensor(t[2], BaseType(out.type()), &value);
    if (!s.ok()) ThrowIfError(errors::Annotate(s, absl::StrCat("feed '", out.name(), "': ")));
    feed_map.emplace(out, Input::Initializer(value));
  }
  std::vector<Output> fetch_outputs;
  for (py::handle fetch : fetches) {
    auto [id, index] = fetch.cast<std::pair<int, int>>();
    fetch_outputs.push_back(graph_->OutputOf(id, index));
  }
  std::vector<Operation> run_outputs;
  for (py::handle target : targets) run_outputs.emplace_back(graph_->NodeById(target.cast<int>()));
  RunOptions options;
  options.set_timeout_in_ms(timeout_in_ms);
  options.set_trace_level(static_cast<RunOptions::TraceLevel>(trace_level));
  RunMetadata metadata;
  std::vector<Tensor> outputs;
  absl::Status s;
  {
    RunningStep running(client_->session());
    py::gil_scoped_release release;
    s = client_->Run(options, feed_map, fetch_outputs, run_outputs, &outputs,
                     trace_level != RunOptions::NO_TRACE ? &metadata : nullptr);
    feed_map.clear();
  }
  DrainReleasedArrays();
  // A step cancelled by Ctrl-C: Python raises KeyboardInterrupt (its
  // handler runs now) instead of the step's CancelledError.
  if (absl::IsCancelled(s) && PyErr_CheckSignals() != 0) throw py::error_already_set();
  ThrowIfError(s);
  py::list results;
  for (const Tensor& t : outputs) results.append(TensorToNumpy(t));
  return py::make_tuple(std::move(results),
                        py::bytes(trace_level != RunOptions::NO_TRACE ? metadata.SerializeAsString()
                                                                      : std::string()));
}

void PySession::Close() {
  if (client_ == nullptr || client_->session() == nullptr) return;
  absl::Status s;
  {
    py::gil_scoped_release release;
    s = client_->session()->Close();
  }
  ThrowIfError(s);
}

void RegisterSession(py::module_& m) {
  py::class_<PySession>(m, "Session")
      .def(py::init<std::shared_ptr<PyGraph>, const std::string&, const std::string&>(),
           py::arg("graph"), py::arg("target"), py::arg("config"))
      .def("run", &PySession::Run, py::arg("feeds"), py::arg("fetches"), py::arg("targets"),
           py::arg("timeout_in_ms"), py::arg("trace_level"))
      .def("close", &PySession::Close);
  m.def("chrome_trace", [](const py::bytes& run_metadata) {
    return StepStatsToChromeTrace(ParseRunMetadata(run_metadata).step_stats());
  });
  m.def("step_stats", [](const py::bytes& run_metadata) {
    const RunMetadata metadata = ParseRunMetadata(run_metadata);
    py::list nodes;
    for (const auto& device : metadata.step_stats().dev_stats()) {
      for (const NodeExecStats& n : device.node_stats()) {
        py::dict node;
        node["device"] = device.device();
        node["node_name"] = n.node_name();
        node["all_start_micros"] = n.all_start_micros();
        node["all_end_rel_micros"] = n.all_end_rel_micros();
        nodes.append(node);
      }
    }
    return nodes;
  });
}

}  // namespace python
}  // namespace distflow
