#include "distflow/common_runtime/executor_set.h"

#include <map>
#include <utility>

#include "distflow/core/status.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/graph_partition.h"

namespace distflow {

absl::StatusOr<std::unique_ptr<ExecutorSet>> ExecutorSet::Create(
    std::unordered_map<std::string, GraphDef> partitions, const DeviceMgr* device_mgr,
    std::shared_ptr<SessionKernels> kernels) {
  std::vector<std::string> device_names;
  for (const Device* d : device_mgr->ListDevices()) {
    device_names.push_back(d->name());
  }
  DF_RETURN_IF_ERROR(ValidatePartitions(partitions, device_names));
  std::unique_ptr<ExecutorSet> set(new ExecutorSet);
  set->kernels_ = kernels;
  // Devices in a stable order, so partition_graphs are too.
  std::map<std::string, GraphDef> ordered;
  for (auto& [device, graph_def] : partitions) {
    ordered.emplace(device, std::move(graph_def));
  }
  for (auto& [location, graph_def] : ordered) {
    absl::StatusOr<Device*> device = device_mgr->LookupDevice(location);
    if (!device.ok()) {
      return errors::InvalidArgument("a partition is placed on '", location,
                                     "', which is not a device here: ", device.status().message());
    }
    auto graph = std::make_unique<Graph>();
    GraphConstructorOptions opts;
    opts.max_nodes = 0;  // partitions of a graph already checked at import
    DF_RETURN_IF_ERROR(ConvertGraphDefToGraph(opts, graph_def, graph.get()));
    DF_ASSIGN_OR_RETURN(FunctionLibraryRuntime * function_library,
                        kernels->FunctionLibrary(*device, graph_def.library()));
    Executor::Params params;
    params.device = *device;
    params.create_kernel = [kernels, d = *device, function_library](const NodeDef& def) {
      return kernels->Get(d, def, function_library);
    };
    DF_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                        Executor::Create(std::move(params), std::move(graph)));
    set->executors_.push_back(std::move(executor));
    graph_def.Clear();
  }
  return set;
}

std::vector<GraphDef> ExecutorSet::partition_graphs() const {
  std::vector<GraphDef> graphs(executors_.size());
  for (size_t i = 0; i < executors_.size(); ++i) executors_[i]->graph().ToGraphDef(&graphs[i]);
  return graphs;
}

void ExecutorSet::RunAsync(const Executor::Args& args, Executor::DoneCallback done) const {
  if (executors_.empty()) {
    done(absl::OkStatus());
    return;
  }
  auto* barrier = new ExecutorBarrier(static_cast<int>(executors_.size()), std::move(done));
  // Only the last executor may start on this thread: the others must not
  // wait for it.
  Executor::Args others = args;
  others.inline_start = false;
  for (size_t i = 0; i + 1 < executors_.size(); ++i) {
    executors_[i]->RunAsync(others, barrier->Get());
  }
  executors_.back()->RunAsync(args, barrier->Get());
}

}  // namespace distflow
