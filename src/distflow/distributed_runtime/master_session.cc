#include "distflow/distributed_runtime/master_session.h"

#include <algorithm>
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/blocking_counter.h"
#include "distflow/core/random.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/call_util.h"
#include "distflow/framework/rendezvous.h"
#include "distflow/graph/graph_constructor.h"
#include "distflow/graph/graph_partition.h"
#include "distflow/graph/subgraph.h"
#include "distflow/graph/tensor_id.h"

namespace distflow {

// One partition of a client graph, registered with the worker of its task.
struct MasterPart {
  std::string task;
  GrpcWorkerClient* worker = nullptr;
  std::string graph_handle;
  GraphDef graph_def;
};

struct MasterSession::ClientGraph {
  Signature sig;
  std::vector<MasterPart> parts;
  int client_part = -1;                // the part holding feeds and fetches
  std::vector<std::string> feed_keys;  // rendezvous key per feed
  std::vector<std::string> fetch_keys;
  std::vector<DataType> feed_types;
};

struct MasterSession::PartialRunState {
  std::shared_ptr<ClientGraph> cg;
  int64_t step_id = 0;
  std::vector<bool> fed, fetched;
  bool started = false;
};

namespace {

std::string CanonicalTensorName(const std::string& name) {
  TensorId id;
  if (!ParseTensorName(name, &id).ok() || id.IsControl()) return name;
  return absl::StrCat(id.node, ":", id.index);
}

std::string TaskOf(const std::string& device) {
  ParsedDeviceName p;
  device_name::Parse(device, &p);
  return device_name::TaskName(p);
}

int64_t NewStepId() {
  return static_cast<int64_t>(random::New64() & 0x7fffffffffffffffull) | 1;
}

}  // namespace

MasterSession::MasterSession(std::string handle, ConfigProto config,
                             std::unique_ptr<DeviceSet> devices,
                             std::shared_ptr<WorkerCache> worker_cache)
    : handle_(std::move(handle)),
      config_(std::move(config)),
      devices_(std::move(devices)),
      worker_cache_(worker_cache) {}

MasterSession::~MasterSession() { DeregisterAll(); }

absl::Status MasterSession::Create(const GraphDef& graph_def) {
  Graph check;
  DF_RETURN_IF_ERROR(ConvertGraphDefToGraph({}, graph_def, &check));
  absl::MutexLock lock(&mu_);
  graph_def_ = graph_def;
  return absl::OkStatus();
}

absl::Status MasterSession::Extend(const ExtendSessionRequest& req,
                                   ExtendSessionResponse* resp) {
  absl::MutexLock lock(&mu_);
  if (closed_) return errors::FailedPrecondition("session ", handle_, " is closed");
  if (req.current_graph_version() != graph_version_) {
    return errors::FailedPrecondition("session ", handle_, " graph version is ", graph_version_,
                                      ", the request extends version ",
                                      req.current_graph_version());
  }
  GraphDef merged = graph_def_;
  for (const NodeDef& n : req.graph_def().node()) *merged.add_node() = n;
  Graph check;
  DF_RETURN_IF_ERROR(ConvertGraphDefToGraph({}, merged, &check));
  graph_def_ = std::move(merged);
  resp->set_new_graph_version(++graph_version_);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<MasterSession::ClientGraph>> MasterSession::GetOrBuildClientGraph(
    const Signature& sig) {
  std::string key = absl::StrCat(absl::StrJoin(sig.feeds, ","), "->",
                                 absl::StrJoin(sig.fetches, ","), "//",
                                 absl::StrJoin(sig.targets, ","));
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return errors::FailedPrecondition("session ", handle_, " is closed");
    auto it = client_graphs_.find(key);
    if (it != client_graphs_.end()) return it->second;
  }
  absl::MutexLock build_lock(&build_mu_);
  {
    absl::MutexLock lock(&mu_);
    auto it = client_graphs_.find(key);
    if (it != client_graphs_.end()) return it->second;
  }
  DF_ASSIGN_OR_RETURN(std::shared_ptr<ClientGraph> cg, BuildClientGraph(sig));
  absl::MutexLock lock(&mu_);
  client_graphs_[key] = cg;
  return cg;
}

absl::StatusOr<std::shared_ptr<MasterSession::ClientGraph>> MasterSession::BuildClientGraph(
    const Signature& sig) {
  GraphDef graph_def;
  {
    absl::MutexLock lock(&mu_);
    graph_def = graph_def_;
  }
  Graph graph;
  DF_RETURN_IF_ERROR(ConvertGraphDefToGraph({}, graph_def, &graph));
  const DeviceAttributes* client = devices_->client_device();
  if (client == nullptr) return errors::FailedPrecondition("the cluster has no devices");
  subgraph::RewriteGraphMetadata meta;
  DF_RETURN_IF_ERROR(subgraph::RewriteGraphForExecution(&graph, sig.feeds, sig.fetches,
                                                        sig.targets, *client, false, &meta));
  {
    absl::MutexLock lock(&mu_);
    Placer placer(&graph, devices_.get(), "", config_.allow_soft_placement(),
                  config_.log_device_placement(), &stateful_placements_);
    DF_RETURN_IF_ERROR(placer.Run());
  }

  PartitionOptions popts;
  popts.node_to_loc = [](const Node* n) { return TaskOf(n->assigned_device_name()); };
  popts.new_name = [this](absl::string_view prefix) {
    absl::MutexLock lock(&mu_);
    return absl::StrCat(prefix, "/_m", name_counter_++);
  };
  const DeviceSet* devices = devices_.get();
  popts.get_incarnation = [devices](const std::string& name) -> uint64_t {
    const DeviceAttributes* d = devices->FindDeviceByName(name);
    return d == nullptr ? 0 : d->incarnation();
  };
  popts.enable_bfloat16_sendrecv = config_.graph_options().enable_bfloat16_sendrecv();
  std::unordered_map<std::string, GraphDef> partitions;
  DF_RETURN_IF_ERROR(Partition(popts, &graph, &partitions));

  auto cg = std::make_shared<ClientGraph>();
  cg->sig = sig;
  cg->feed_types = meta.feed_types;
  const std::string client_task = TaskOf(client->name());
  std::vector<std::string> tasks;
  for (const auto& [task, def] : partitions) tasks.push_back(task);
  std::sort(tasks.begin(), tasks.end());
  for (const std::string& task : tasks) {
    MasterPart part;
    part.task = task;
    part.graph_def = partitions[task];
    DF_ASSIGN_OR_RETURN(part.worker, worker_cache_->GetWorker(task));
    if (task == client_task) cg->client_part = static_cast<int>(cg->parts.size());
    cg->parts.push_back(std::move(part));
  }
  // Register every partition; on failure deregister what was registered.
  std::vector<RegisterGraphRequest> reqs(cg->parts.size());
  std::vector<RegisterGraphResponse> resps(cg->parts.size());
  std::vector<CallOptions> opts(cg->parts.size());
  const std::vector<absl::Status> statuses =
      CallAllAndWait(cg->parts.size(), [&](size_t i, StatusCallback done) {
        reqs[i].set_session_handle(handle_);
        *reqs[i].mutable_graph_def() = cg->parts[i].graph_def;
        *reqs[i].mutable_graph_options() = config_.graph_options();
        opts[i].set_timeout_ms(60000);
        cg->parts[i].worker->RegisterGraphAsync(&reqs[i], &resps[i], &opts[i], std::move(done));
      });
  for (size_t i = 0; i < cg->parts.size(); ++i) {
    cg->parts[i].graph_handle = resps[i].graph_handle();
  }
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (statuses[i].ok()) continue;
    for (size_t j = 0; j < cg->parts.size(); ++j) {
      if (!statuses[j].ok()) continue;
      DeregisterGraphRequest req;
      req.set_graph_handle(cg->parts[j].graph_handle);
      DeregisterGraphResponse resp;
      CallOptions opts;
      opts.set_timeout_ms(10000);
      CallAndWait([&](StatusCallback cb) {
        cg->parts[j].worker->DeregisterGraphAsync(&req, &resp, &opts, std::move(cb));
      }).IgnoreError();
    }
    return WorkerError(cg->parts[i].task, statuses[i]);
  }

  for (const std::string& feed : sig.feeds) {
    cg->feed_keys.push_back(Rendezvous::CreateKey(client->name(), client->incarnation(),
                                                  client->name(), feed, FrameAndIter()));
  }
  for (const std::string& fetch : sig.fetches) {
    cg->fetch_keys.push_back(Rendezvous::CreateKey(client->name(), client->incarnation(),
                                                   client->name(), fetch, FrameAndIter()));
  }
  if ((!sig.feeds.empty() || !sig.fetches.empty()) && cg->client_part < 0) {
    return errors::Internal("no partition holds the client's feeds and fetches");
  }
  return cg;
}

absl::Status MasterSession::WorkerError(const std::string& task, const absl::Status& s) {
  if (s.code() == absl::StatusCode::kNotFound || s.code() == absl::StatusCode::kUnavailable ||
      s.code() == absl::StatusCode::kAborted) {
    // A worker that came back with new devices is a different worker: the
    // graphs and state this session had there are gone.
    absl::StatusOr<GrpcWorkerClient*> worker = worker_cache_->GetWorker(task);
    if (worker.ok()) {
      GetStatusRequest req;
      GetStatusResponse resp;
      CallOptions opts;
      opts.set_timeout_ms(2000);
      absl::Status st = CallAndWait(
          [&](StatusCallback cb) { (*worker)->GetStatusAsync(&req, &resp, &opts, std::move(cb)); });
      if (st.ok()) {
        for (const DeviceAttributes& d : resp.device_attributes()) {
          const DeviceAttributes* known = devices_->FindDeviceByName(d.name());
          if (known != nullptr && known->incarnation() != d.incarnation()) {
            return errors::Aborted("task ", task,
                                   " was restarted (device incarnation changed); the session's "
                                   "state there is lost, create a new session: ",
                                   s.message());
          }
        }
      }
    }
  }
  if (absl::StrContains(s.message(), task)) return s;
  return absl::Status(s.code(), absl::StrCat(s.message(), " (on task ", task, ")"));
}

absl::Status MasterSession::RunClientGraph(const ClientGraph& cg, int64_t step_id,
                                           const RunOptions& options,
                                           const std::vector<const TensorProto*>& feeds,
                                           const std::vector<int>& fetch_indices,
                                           std::vector<TensorProto>* fetched,
                                           RunMetadata* metadata, bool is_partial,
                                           bool is_last_partial) {
  const size_t n = cg.parts.size();
  std::vector<RunGraphRequest> reqs(n);
  std::vector<RunGraphResponse> resps(n);
  std::vector<std::unique_ptr<CallOptions>> opts(n);
  int64_t timeout = options.timeout_in_ms();
  if (timeout <= 0) timeout = config_.operation_timeout_in_ms();
  const bool trace = options.trace_level() != RunOptions::NO_TRACE;
  for (size_t i = 0; i < n; ++i) {
    RunGraphRequest& req = reqs[i];
    req.set_session_handle(handle_);
    req.set_graph_handle(cg.parts[i].graph_handle);
    req.set_step_id(step_id);
    req.set_is_partial(is_partial);
    req.set_is_last_partial_run(is_last_partial);
    req.mutable_exec_opts()->set_record_timeline(trace);
    req.mutable_exec_opts()->set_record_partition_graphs(options.output_partition_graphs());
    if (timeout > 0) req.set_timeout_in_ms(timeout);
    if (static_cast<int>(i) == cg.client_part) {
      for (size_t f = 0; f < feeds.size(); ++f) {
        if (feeds[f] == nullptr) continue;
        NamedTensorProto* send = req.add_send();
        send->set_name(cg.feed_keys[f]);
        *send->mutable_tensor() = *feeds[f];
      }
      for (int f : fetch_indices) req.add_recv_key(cg.fetch_keys[f]);
    }
    opts[i] = std::make_unique<CallOptions>();
    if (timeout > 0) opts[i]->set_timeout_ms(timeout);
  }

  absl::Mutex mu;
  absl::Status first_error;
  std::string failed_task;
  bool others_cancelled = false;
  absl::BlockingCounter pending(static_cast<int>(n));
  for (size_t i = 0; i < n; ++i) {
    cg.parts[i].worker->RunGraphAsync(
        &reqs[i], &resps[i], opts[i].get(), [&, i](const absl::Status& s) {
          if (!s.ok()) {
            bool cancel_others = false;
            {
              absl::MutexLock lock(&mu);
              // Cancelled and derived replies are usually echoes of
              // another task's failure: report the cause.
              if (errors::IsBetterCause(s, first_error)) {
                first_error = s;
                failed_task = cg.parts[i].task;
              }
              // A derived reply means the task that failed is alive and
              // finishing its own step with the cause: cancelling its call
              // now would lose that cause to a local Cancelled.
              if (!errors::IsDerived(s) && !others_cancelled) {
                others_cancelled = cancel_others = true;
              }
            }
            if (cancel_others) {
              for (size_t j = 0; j < n; ++j) {
                if (j != i) opts[j]->StartCancel();
              }
            }
          }
          pending.DecrementCount();
        });
  }
  pending.Wait();

  // Every worker drops the step's rendezvous, whatever happened.
  if (!is_partial || is_last_partial || !first_error.ok()) {
    for (const MasterPart& part : cg.parts) {
      auto* req = new CleanupGraphRequest;
      auto* resp = new CleanupGraphResponse;
      auto* copts = new CallOptions;
      req->set_step_id(step_id);
      copts->set_timeout_ms(10000);
      part.worker->CleanupGraphAsync(req, resp, copts, [req, resp, copts](const absl::Status&) {
        delete req;
        delete resp;
        delete copts;
      });
    }
  }
  if (!first_error.ok()) {
    return WorkerError(failed_task, errors::StripDerived(first_error));
  }

  if (cg.client_part >= 0) {
    const RunGraphResponse& resp = resps[cg.client_part];
    std::unordered_map<std::string, const TensorProto*> by_key;
    for (const NamedTensorProto& t : resp.recv()) by_key[t.name()] = &t.tensor();
    fetched->resize(fetch_indices.size());
    for (size_t k = 0; k < fetch_indices.size(); ++k) {
      const int f = fetch_indices[k];
      auto it = by_key.find(cg.fetch_keys[f]);
      if (it == by_key.end()) {
        return errors::Internal("worker ", cg.parts[cg.client_part].task,
                                " did not return fetch '", cg.sig.fetches[f], "'");
      }
      (*fetched)[k] = *it->second;
    }
  }
  if (metadata != nullptr) {
    for (const RunGraphResponse& resp : resps) {
      for (const auto& dev : resp.step_stats().dev_stats()) {
        *metadata->mutable_step_stats()->add_dev_stats() = dev;
      }
      for (const GraphDef& g : resp.partition_graph()) *metadata->add_partition_graphs() = g;
    }
  }
  return absl::OkStatus();
}

absl::Status MasterSession::Run(const RunStepRequest& req, RunStepResponse* resp) {
  if (!req.partial_run_handle().empty()) return PartialRun(req, resp);
  Signature sig;
  std::vector<const TensorProto*> feeds;
  // Sorted, de-duplicated signature so equal runs share one client graph.
  std::vector<std::pair<std::string, const TensorProto*>> sorted_feeds;
  for (const NamedTensorProto& f : req.feed()) {
    sorted_feeds.emplace_back(CanonicalTensorName(f.name()), &f.tensor());
  }
  std::sort(sorted_feeds.begin(), sorted_feeds.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < sorted_feeds.size(); ++i) {
    if (i > 0 && sorted_feeds[i].first == sorted_feeds[i - 1].first) {
      return errors::InvalidArgument("tensor '", sorted_feeds[i].first, "' is fed twice");
    }
    sig.feeds.push_back(sorted_feeds[i].first);
    feeds.push_back(sorted_feeds[i].second);
  }
  for (const std::string& f : req.fetch()) sig.fetches.push_back(CanonicalTensorName(f));
  std::sort(sig.fetches.begin(), sig.fetches.end());
  sig.fetches.erase(std::unique(sig.fetches.begin(), sig.fetches.end()), sig.fetches.end());
  sig.targets.assign(req.target().begin(), req.target().end());
  std::sort(sig.targets.begin(), sig.targets.end());
  sig.targets.erase(std::unique(sig.targets.begin(), sig.targets.end()), sig.targets.end());

  DF_ASSIGN_OR_RETURN(std::shared_ptr<ClientGraph> cg, GetOrBuildClientGraph(sig));
  std::vector<int> all(sig.fetches.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  std::vector<TensorProto> fetched;
  DF_RETURN_IF_ERROR(RunClientGraph(*cg, NewStepId(), req.options(), feeds, all, &fetched,
                                    resp->mutable_metadata(), false, false));
  for (const std::string& f : req.fetch()) {
    const std::string canon = CanonicalTensorName(f);
    const size_t idx = std::lower_bound(sig.fetches.begin(), sig.fetches.end(), canon) -
                       sig.fetches.begin();
    NamedTensorProto* out = resp->add_tensor();
    out->set_name(f);
    *out->mutable_tensor() = fetched[idx];
  }
  return absl::OkStatus();
}

absl::Status MasterSession::MakeCallable(const MakeCallableRequest& req,
                                         MakeCallableResponse* resp) {
  Callable c;
  c.sig.feeds.assign(req.options().feed().begin(), req.options().feed().end());
  c.sig.fetches.assign(req.options().fetch().begin(), req.options().fetch().end());
  c.sig.targets.assign(req.options().target().begin(), req.options().target().end());
  c.run_options = req.options().run_options();
  for (auto* names : {&c.sig.feeds, &c.sig.fetches}) {
    for (std::string& n : *names) n = CanonicalTensorName(n);
  }
  // Build (and register) now, so errors surface here and runs are fast.
  DF_RETURN_IF_ERROR(GetOrBuildClientGraph(c.sig).status());
  absl::MutexLock lock(&mu_);
  const int64_t handle = next_callable_++;
  callables_[handle] = std::move(c);
  resp->set_handle(handle);
  return absl::OkStatus();
}

absl::Status MasterSession::RunCallable(const RunCallableRequest& req,
                                        RunCallableResponse* resp) {
  Callable c;
  {
    absl::MutexLock lock(&mu_);
    auto it = callables_.find(req.handle());
    if (it == callables_.end()) {
      return errors::InvalidArgument("callable handle ", req.handle(), " is not valid in session ",
                                     handle_);
    }
    c = it->second;
  }
  if (req.feed_size() != static_cast<int>(c.sig.feeds.size())) {
    return errors::InvalidArgument("callable ", req.handle(), " takes ", c.sig.feeds.size(),
                                   " feeds, got ", req.feed_size());
  }
  DF_ASSIGN_OR_RETURN(std::shared_ptr<ClientGraph> cg, GetOrBuildClientGraph(c.sig));
  std::vector<const TensorProto*> feeds;
  for (const TensorProto& t : req.feed()) feeds.push_back(&t);
  std::vector<int> all(c.sig.fetches.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  std::vector<TensorProto> fetched;
  DF_RETURN_IF_ERROR(RunClientGraph(*cg, NewStepId(), c.run_options, feeds, all, &fetched,
                                    resp->mutable_metadata(), false, false));
  for (TensorProto& t : fetched) *resp->add_fetch() = std::move(t);
  return absl::OkStatus();
}

absl::Status MasterSession::ReleaseCallable(const ReleaseCallableRequest& req) {
  absl::MutexLock lock(&mu_);
  if (callables_.erase(req.handle()) == 0) {
    return errors::InvalidArgument("callable handle ", req.handle(), " is not valid in session ",
                                   handle_);
  }
  return absl::OkStatus();
}

absl::Status MasterSession::PartialRunSetup(const PartialRunSetupRequest& req,
                                            PartialRunSetupResponse* resp) {
  Signature sig;
  for (const std::string& f : req.feed()) sig.feeds.push_back(CanonicalTensorName(f));
  for (const std::string& f : req.fetch()) sig.fetches.push_back(CanonicalTensorName(f));
  sig.targets.assign(req.target().begin(), req.target().end());
  DF_ASSIGN_OR_RETURN(std::shared_ptr<ClientGraph> cg, GetOrBuildClientGraph(sig));
  auto run = std::make_shared<PartialRunState>();
  run->cg = cg;
  run->step_id = NewStepId();
  run->fed.assign(sig.feeds.size(), false);
  run->fetched.assign(sig.fetches.size(), false);
  absl::MutexLock lock(&mu_);
  const std::string handle = absl::StrCat("partial_", next_partial_++);
  partial_runs_[handle] = std::move(run);
  resp->set_partial_run_handle(handle);
  return absl::OkStatus();
}

absl::Status MasterSession::PartialRun(const RunStepRequest& req, RunStepResponse* resp) {
  std::shared_ptr<PartialRunState> run;
  {
    absl::MutexLock lock(&mu_);
    auto it = partial_runs_.find(req.partial_run_handle());
    if (it == partial_runs_.end()) {
      return errors::InvalidArgument("partial run handle '", req.partial_run_handle(),
                                     "' is not valid (unknown, or its run has finished)");
    }
    run = it->second;
  }
  const Signature& sig = run->cg->sig;
  std::vector<const TensorProto*> feeds(sig.feeds.size(), nullptr);
  std::vector<int> fetch_indices;
  {
    absl::MutexLock lock(&mu_);
    for (const NamedTensorProto& f : req.feed()) {
      const std::string name = CanonicalTensorName(f.name());
      auto it = std::find(sig.feeds.begin(), sig.feeds.end(), name);
      if (it == sig.feeds.end()) {
        return errors::InvalidArgument("feed '", f.name(),
                                       "' was not given to PartialRunSetup");
      }
      const size_t i = it - sig.feeds.begin();
      if (run->fed[i] || feeds[i] != nullptr) {
        return errors::InvalidArgument("feed '", f.name(), "' was already fed in this partial run");
      }
      feeds[i] = &f.tensor();
    }
    for (const std::string& f : req.fetch()) {
      const std::string name = CanonicalTensorName(f);
      auto it = std::find(sig.fetches.begin(), sig.fetches.end(), name);
      if (it == sig.fetches.end()) {
        return errors::InvalidArgument("fetch '", f, "' was not given to PartialRunSetup");
      }
      const int i = static_cast<int>(it - sig.fetches.begin());
      if (run->fetched[i]) {
        return errors::InvalidArgument("fetch '", f, "' was already fetched in this partial run");
      }
      fetch_indices.push_back(i);
    }
    for (size_t i = 0; i < feeds.size(); ++i) run->fed[i] = run->fed[i] || feeds[i] != nullptr;
    for (int i : fetch_indices) run->fetched[i] = true;
  }
  bool last;
  {
    absl::MutexLock lock(&mu_);
    last = std::all_of(run->fed.begin(), run->fed.end(), [](bool b) { return b; }) &&
           std::all_of(run->fetched.begin(), run->fetched.end(), [](bool b) { return b; });
  }
  std::vector<TensorProto> fetched;
  absl::Status s = RunClientGraph(*run->cg, run->step_id, req.options(), feeds, fetch_indices,
                                  &fetched, resp->mutable_metadata(), true, last);
  if (!s.ok() || last) {
    absl::MutexLock lock(&mu_);
    partial_runs_.erase(req.partial_run_handle());
  }
  DF_RETURN_IF_ERROR(s);
  for (size_t k = 0; k < fetch_indices.size(); ++k) {
    NamedTensorProto* out = resp->add_tensor();
    out->set_name(req.fetch(static_cast<int>(k)));
    *out->mutable_tensor() = std::move(fetched[k]);
  }
  return absl::OkStatus();
}

void MasterSession::DeregisterAll() {
  std::map<std::string, std::shared_ptr<ClientGraph>> graphs;
  {
    absl::MutexLock lock(&mu_);
    graphs.swap(client_graphs_);
  }
  for (auto& [key, cg] : graphs) {
    for (MasterPart& part : cg->parts) {
      DeregisterGraphRequest req;
      req.set_session_handle(handle_);
      req.set_graph_handle(part.graph_handle);
      DeregisterGraphResponse resp;
      CallOptions opts;
      opts.set_timeout_ms(5000);
      CallAndWait([&](StatusCallback cb) {
        part.worker->DeregisterGraphAsync(&req, &resp, &opts, std::move(cb));
      }).IgnoreError();
    }
  }
}

absl::Status MasterSession::Close() {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
  }
  DeregisterAll();
  // Workers drop the session's shared kernels and its cluster.
  for (const std::string& task : worker_cache_->ListWorkers()) {
    absl::StatusOr<GrpcWorkerClient*> worker = worker_cache_->GetWorker(task);
    if (!worker.ok()) continue;
    DeleteWorkerSessionRequest req;
    req.set_session_handle(handle_);
    DeleteWorkerSessionResponse resp;
    CallOptions opts;
    opts.set_timeout_ms(5000);
    CallAndWait([&](StatusCallback cb) {
      (*worker)->DeleteWorkerSessionAsync(&req, &resp, &opts, std::move(cb));
    }).IgnoreError();
  }
  return absl::OkStatus();
}

}  // namespace distflow
