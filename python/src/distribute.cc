// distflow.distribute as the extension gives it: an in-process GrpcServer,
// the ParameterServerStrategy (whose variable placement PyGraph applies to
// the variables Python builds in its scope) and the ClusterCoordinator with
// its RemoteValues and per-worker values. Every wait releases the GIL and
// has the deadline the caller gives (or the coordinator's own).
#include "distribute.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "distflow/coordinator/cluster_coordinator.h"
#include "distflow/coordinator/parameter_server_strategy.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_server.h"
#include "distflow/tensorflow_server.pb.h"
#include "graph.h"
#include "numpy_tensor.h"
#include "status.h"

namespace py = pybind11;

namespace distflow {
namespace python {
namespace {

// {job: [address, ...]} or {job: {task: address}}.
ClusterDef ClusterFromPython(const py::dict& jobs) {
  ClusterDef cluster;
  for (auto [name, tasks] : jobs) {
    JobDef* job = cluster.add_job();
    job->set_name(name.cast<std::string>());
    if (py::isinstance<py::dict>(tasks)) {
      for (auto [index, address] : tasks.cast<py::dict>()) {
        (*job->mutable_tasks())[index.cast<int>()] = address.cast<std::string>();
      }
    } else {
      int index = 0;
      for (py::handle address : tasks) {
        (*job->mutable_tasks())[index++] = address.cast<std::string>();
      }
    }
  }
  return cluster;
}

absl::Duration Seconds(double s) { return s < 0 ? absl::InfiniteDuration() : absl::Seconds(s); }

class PyServer {
 public:
  PyServer(const py::dict& cluster, const std::string& job, int task, const std::string& protocol) {
    ServerDef def;
    *def.mutable_cluster() = ClusterFromPython(cluster);
    def.set_job_name(job);
    def.set_task_index(task);
    def.set_protocol(protocol);
    server_ = ValueOrThrow(GrpcServer::Create(def));
  }
  void Start() { ThrowIfError(server_->Start()); }
  void Join() {
    py::gil_scoped_release release;
    server_->Join();
  }
  void Stop() {
    py::gil_scoped_release release;
    server_->Stop();
  }
  std::string Target() const { return server_->target(); }
  int Port() const { return server_->bound_port(); }

 private:
  std::unique_ptr<GrpcServer> server_;
};

class PyRemoteValue {
 public:
  explicit PyRemoteValue(RemoteValue v) : value_(std::move(v)) {}
  py::list Fetch(double timeout_s) const {
    absl::StatusOr<std::vector<Tensor>> tensors;
    {
      py::gil_scoped_release release;
      tensors = value_.Fetch(Seconds(timeout_s));
    }
    py::list out;
    for (const Tensor& t : ValueOrThrow(std::move(tensors))) out.append(TensorToNumpy(t));
    return out;
  }
  std::string State() const { return RemoteValue::StateName(value_.state()); }

 private:
  RemoteValue value_;
};

struct PyPerWorkerValues {
  PerWorkerValues values;
};

class PyCoordinator {
 public:
  PyCoordinator(const ParameterServerStrategy& strategy, double call_timeout_s,
                double worker_wait_s, int max_inflight_closures) {
    CoordinatorOptions options = strategy.MakeCoordinatorOptions();
    options.call_timeout = Seconds(call_timeout_s);
    options.worker_wait = Seconds(worker_wait_s);
    options.max_inflight_closures = max_inflight_closures;
    coordinator_ = ValueOrThrow(ClusterCoordinator::Create(std::move(options)));
  }

  int RegisterFunction(const py::bytes& graph_def, std::vector<std::string> args,
                       std::vector<std::string> results, std::vector<std::string> targets) {
    WorkerFunction fn;
    if (!fn.graph.ParseFromString(std::string(graph_def))) {
      ThrowIfError(errors::InvalidArgument("not a serialized GraphDef"));
    }
    fn.args = std::move(args);
    fn.results = std::move(results);
    fn.targets = std::move(targets);
    absl::StatusOr<int> id;
    {
      py::gil_scoped_release release;
      id = coordinator_->RegisterFunction(std::move(fn));
    }
    return ValueOrThrow(std::move(id));
  }

  PyRemoteValue Schedule(int fn, const py::list& args) {
    std::vector<ClosureArg> closure_args;
    for (py::handle a : args) {
      if (py::isinstance<PyPerWorkerValues>(a)) {
        closure_args.emplace_back(a.cast<const PyPerWorkerValues&>().values);
      } else {
        Tensor t;
        ThrowIfError(NumpyToTensor(a, DT_INVALID, &t));
        closure_args.emplace_back(std::move(t));
      }
    }
    absl::StatusOr<RemoteValue> value;
    {
      py::gil_scoped_release release;
      value = coordinator_->Schedule(fn, std::move(closure_args));
    }
    return PyRemoteValue(ValueOrThrow(std::move(value)));
  }

  py::list RunOnWorker(int fn, int worker, const py::list& args) {
    std::vector<Tensor> tensors;
    for (py::handle a : args) {
      Tensor t;
      ThrowIfError(NumpyToTensor(a, DT_INVALID, &t));
      tensors.push_back(std::move(t));
    }
    absl::StatusOr<std::vector<Tensor>> results;
    {
      py::gil_scoped_release release;
      results = coordinator_->RunOnWorker(fn, worker, tensors);
    }
    py::list out;
    for (const Tensor& t : ValueOrThrow(std::move(results))) out.append(TensorToNumpy(t));
    return out;
  }

  void Join(double timeout_s) {
    absl::Status s;
    {
      py::gil_scoped_release release;
      s = coordinator_->Join(Seconds(timeout_s));
    }
    ThrowIfError(s);
  }

  bool Done() {
    absl::StatusOr<bool> done;
    {
      py::gil_scoped_release release;
      done = coordinator_->Done();
    }
    return ValueOrThrow(std::move(done));
  }

  PyPerWorkerValues CreatePerWorkerResource(int fn) {
    absl::StatusOr<PerWorkerValues> values;
    {
      py::gil_scoped_release release;
      values = coordinator_->CreatePerWorkerResource(fn);
    }
    return PyPerWorkerValues{ValueOrThrow(std::move(values))};
  }

  py::dict Counters() const {
    const CoordinatorCounters c = coordinator_->counters();
    py::dict d;
    d["scheduled"] = c.scheduled;
    d["done"] = c.done;
    d["retried"] = c.retried;
    d["failed"] = c.failed;
    d["worker_failures"] = c.worker_failures;
    d["recoveries"] = c.recoveries;
    d["workers_up"] = c.workers_up;
    return d;
  }

  int NumWorkers() const { return coordinator_->num_workers(); }

  void Close() {
    py::gil_scoped_release release;
    coordinator_.reset();
  }

 private:
  std::unique_ptr<ClusterCoordinator> coordinator_;
};

}  // namespace

void RegisterDistribute(py::module_& m) {
  py::class_<PyServer>(m, "Server")
      .def(py::init<const py::dict&, const std::string&, int, const std::string&>())
      .def("start", &PyServer::Start)
      .def("join", &PyServer::Join)
      .def("stop", &PyServer::Stop)
      .def_property_readonly("target", &PyServer::Target)
      .def_property_readonly("port", &PyServer::Port);
  py::class_<ParameterServerStrategy>(m, "ParameterServerStrategy")
      .def(py::init([](const py::dict& cluster) {
        return ValueOrThrow(ParameterServerStrategy::FromClusterDef(ClusterFromPython(cluster)));
      }))
      .def_property_readonly("num_ps", &ParameterServerStrategy::num_ps)
      .def_property_readonly("num_workers", &ParameterServerStrategy::num_workers);
  m.def("set_variable_strategy", [](PyGraph& g, const ParameterServerStrategy* strategy) {
    g.SetVariablePlacement(strategy == nullptr
                               ? std::nullopt
                               : std::optional<Scope>(strategy->VariableScope(g.root())));
  });
  py::class_<PyRemoteValue>(m, "RemoteValue")
      .def("fetch", &PyRemoteValue::Fetch)
      .def_property_readonly("state", &PyRemoteValue::State);
  py::class_<PyPerWorkerValues>(m, "PerWorkerValues");
  m.attr("DEFAULT_INFLIGHT_CLOSURES") = kDefaultInflightClosures;
  py::class_<PyCoordinator>(m, "ClusterCoordinator")
      .def(py::init<const ParameterServerStrategy&, double, double, int>())
      .def("register_function", &PyCoordinator::RegisterFunction)
      .def("schedule", &PyCoordinator::Schedule)
      .def("run_on_worker", &PyCoordinator::RunOnWorker)
      .def("join", &PyCoordinator::Join)
      .def("done", &PyCoordinator::Done)
      .def("create_per_worker_resource", &PyCoordinator::CreatePerWorkerResource)
      .def("counters", &PyCoordinator::Counters)
      .def_property_readonly("num_workers", &PyCoordinator::NumWorkers)
      .def("close", &PyCoordinator::Close);
}

}  // namespace python
}  // namespace distflow
