#include "distflow/distributed_runtime/graph_mgr.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "distflow/common_runtime/device_mgr.h"
#include "distflow/common_runtime/graph_execution_state.h"
#include "distflow/core/status.h"
#include "distflow/core/threadpool.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {

GraphMgr::GraphMgr(const WorkerEnv* env) : env_(env) {}

GraphMgr::~GraphMgr() = default;

std::shared_ptr<SessionKernels> GraphMgr::KernelsOf(const std::string& session) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<SessionKernels>& kernels = kernels_[session];
  if (kernels == nullptr) kernels = std::make_shared<SessionKernels>();
  return kernels;
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

  PartitionGraphOptions popts;
  popts.by = PartitionBy::kDevice;
  const DeviceMgr* mgr = env_->device_mgr;
  popts.incarnation = [mgr](const std::string& name) -> uint64_t {
    absl::StatusOr<Device*> d = mgr->LookupDevice(name);
    return d.ok() ? (*d)->incarnation() : 0;
  };
  popts.name_tag = "_w";
  popts.counter = &name_counter_;
  popts.enable_bfloat16_sendrecv = graph_options.enable_bfloat16_sendrecv();
  std::unordered_map<std::string, GraphDef> partitions;
  DF_RETURN_IF_ERROR(PartitionGraph(popts, graph.get(), &partitions));

  auto item = std::make_shared<Item>();
  item->session = session;
  DF_ASSIGN_OR_RETURN(item->executors,
                      ExecutorSet::Create(std::move(partitions), mgr, KernelsOf(session)));
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
  kernels_.erase(session);
}

void GraphMgr::DeregisterAll() {
  absl::MutexLock lock(&mu_);
  table_.clear();
  kernels_.clear();
}

void GraphMgr::ExecuteAsync(const std::string& handle, int64_t step_id, Rendezvous* rendezvous,
                            CancellationManager* cancellation_manager,
                            StepStatsCollector* collector, std::function<void(absl::Status)> done) {
  std::shared_ptr<Item> item;
  {
    absl::MutexLock lock(&mu_);
    auto it = table_.find(handle);
    if (it != table_.end()) item = it->second;
  }
  if (item == nullptr) {
    done(errors::NotFound("graph handle '", handle, "' is not registered on ", env_->task_name));
    return;
  }
  ThreadPool* pool = env_->compute_pool;
  Executor::Args args;
  args.step_id = step_id;
  args.rendezvous = rendezvous;
  args.cancellation_manager = cancellation_manager;
  args.stats_collector = collector;
  args.runner = [pool](Executor::Closure c) { pool->Schedule(std::move(c)); };
  // The step's cheap start runs on the caller's (RPC) thread: a hand-off to
  // the pool would cost more than it.
  args.inline_start = true;
  // The item stays alive until the set is done.
  const ExecutorSet* executors = item->executors.get();
  executors->RunAsync(
      args, [item = std::move(item), done = std::move(done)](const absl::Status& s) { done(s); });
}

absl::Status GraphMgr::PartitionGraphs(const std::string& handle, std::vector<GraphDef>* out) {
  absl::MutexLock lock(&mu_);
  auto it = table_.find(handle);
  if (it == table_.end()) return errors::NotFound("graph handle '", handle, "' is not registered");
  *out = it->second->executors->partition_graphs();
  return absl::OkStatus();
}

int64_t GraphMgr::num_graphs() {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(table_.size());
}

}  // namespace distflow
