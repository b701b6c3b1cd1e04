#include "distflow/distributed_runtime/graph_mgr.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "distflow/common_runtime/device_mgr.h"
#include "distflow/core/status.h"
#include "distflow/core/threadpool.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/graph_partition.h"

namespace distflow {

GraphMgr::GraphMgr(const WorkerEnv* env) : env_(env) {}

GraphMgr::~GraphMgr() = default;

absl::StatusOr<std::shared_ptr<OpKernel>> GraphMgr::GetOrCreateKernel(
    const std::string& session, Device* device, const NodeDef& def) {
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp(def.op());
  const bool stateful = reg != nullptr && reg->op_def.is_stateful() &&
                        def.op() != "_Send" && def.op() != "_Recv";
  if (stateful) {
    absl::MutexLock lock(&mu_);
    auto it = stateful_kernels_.find(KernelKey(session, def.name()));
    if (it != stateful_kernels_.end()) return it->second;
  }
  DF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                      KernelRegistry::Global()->CreateKernel(device, def));
  std::shared_ptr<OpKernel> kernel(std::move(k));
  if (stateful) {
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = stateful_kernels_.try_emplace(KernelKey(session, def.name()), kernel);
    return it->second;
  }
  return kernel;
}

absl::Status GraphMgr::Register(const std::string& session, const GraphDef& graph_def,
                                const GraphOptions& graph_options, std::string* handle) {
  auto graph = std::make_unique<Graph>();
  DF_RETURN_IF_ERROR(ConvertGraphDefToGraph({}, graph_def, graph.get()));

  // Every node must name a device of this worker; the device name becomes
  // the location the graph is partitioned by.
  for (Node* n : graph->op_nodes()) {
    const std::string& requested = n->requested_device();
    absl::StatusOr<Device*> d = env_->device_mgr->LookupDevice(requested);
    if (!d.ok()) {
      return errors::InvalidArgument("node '", n->name(), "' is placed on '", requested,
                                     "' which is not a device of ", env_->task_name);
    }
    n->set_assigned_device_name((*d)->name());
  }

  PartitionOptions popts;
  popts.node_to_loc = [](const Node* n) { return n->assigned_device_name(); };
  int64_t name_counter = 0;
  popts.new_name = [&name_counter](absl::string_view prefix) {
    return absl::StrCat(prefix, "/_w", name_counter++);
  };
  const DeviceMgr* mgr = env_->device_mgr;
  popts.get_incarnation = [mgr](const std::string& name) -> uint64_t {
    absl::StatusOr<Device*> d = mgr->LookupDevice(name);
    return d.ok() ? (*d)->incarnation() : 0;
  };
  popts.enable_bfloat16_sendrecv = graph_options.enable_bfloat16_sendrecv();
  std::unordered_map<std::string, GraphDef> partitions;
  DF_RETURN_IF_ERROR(Partition(popts, graph.get(), &partitions));

  auto item = std::make_shared<Item>();
  item->session = session;
  for (auto& [device_name, part_def] : partitions) {
    DF_ASSIGN_OR_RETURN(Device * device, env_->device_mgr->LookupDevice(device_name));
    auto part = std::make_unique<Graph>();
    DF_RETURN_IF_ERROR(ConvertGraphDefToGraph({}, part_def, part.get()));
    Executor::Params params;
    params.device = device;
    params.create_kernel = [this, session, device](const NodeDef& def) {
      return GetOrCreateKernel(session, device, def);
    };
    DF_ASSIGN_OR_RETURN(std::unique_ptr<Executor> exec,
                        Executor::Create(std::move(params), std::move(part)));
    item->executors.push_back(std::move(exec));
    item->partitions.push_back(std::move(part_def));
  }
  absl::MutexLock lock(&mu_);
  *handle = absl::StrCat("graph_", next_id_++);
  table_[*handle] = std::move(item);
  return absl::OkStatus();
}

absl::Status GraphMgr::Deregister(const std::string& handle) {
  absl::MutexLock lock(&mu_);
  if (table_.erase(handle) == 0) {
    return errors::NotFound("graph handle '", handle, "' is not registered");
  }
  return absl::OkStatus();
}

void GraphMgr::DeregisterSession(const std::string& session) {
  absl::MutexLock lock(&mu_);
  for (auto it = table_.begin(); it != table_.end();) {
    auto next = std::next(it);
    if (it->second->session == session) table_.erase(it);
    it = next;
  }
  for (auto it = stateful_kernels_.begin(); it != stateful_kernels_.end();) {
    auto next = std::next(it);
    if (it->first.first == session) stateful_kernels_.erase(it);
    it = next;
  }
}

void GraphMgr::DeregisterAll() {
  absl::MutexLock lock(&mu_);
  table_.clear();
  stateful_kernels_.clear();
}

void GraphMgr::ExecuteAsync(const std::string& handle, int64_t step_id, Rendezvous* rendezvous,
                            CancellationManager* cancellation_manager,
                            StepStatsCollector* collector,
                            std::function<void(absl::Status)> done) {
  std::shared_ptr<Item> item;
  {
    absl::MutexLock lock(&mu_);
    auto it = table_.find(handle);
    if (it != table_.end()) item = it->second;
  }
  if (item == nullptr) {
    done(errors::NotFound("graph handle '", handle, "' is not registered on ",
                          env_->task_name));
    return;
  }
  if (item->executors.empty()) {
    done(absl::OkStatus());
    return;
  }
  ThreadPool* pool = env_->compute_pool;
  Executor::Args args;
  args.step_id = step_id;
  args.rendezvous = rendezvous;
  args.cancellation_manager = cancellation_manager;
  args.stats_collector = collector;
  args.runner = [pool](Executor::Closure c) { pool->Schedule(std::move(c)); };
  // The item stays alive until the barrier's callback runs.
  auto* barrier = new ExecutorBarrier(
      static_cast<int>(item->executors.size()),
      [item, done = std::move(done)](const absl::Status& s) { done(s); });
  for (const auto& exec : item->executors) exec->RunAsync(args, barrier->Get());
}

absl::Status GraphMgr::PartitionGraphs(const std::string& handle, std::vector<GraphDef>* out) {
  absl::MutexLock lock(&mu_);
  auto it = table_.find(handle);
  if (it == table_.end()) return errors::NotFound("graph handle '", handle, "' is not registered");
  *out = it->second->partitions;
  return absl::OkStatus();
}

}  // namespace distflow
