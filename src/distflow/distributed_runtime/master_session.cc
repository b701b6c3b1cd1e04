#include "distflow/distributed_runtime/master_session.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distflow/common_runtime/session.h"
#include "distflow/core/memory_budget.h"
#include "distflow/core/random.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/call_util.h"
#include "distflow/framework/device_name_utils.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {

// One partition of a client graph, registered with the worker of its task.
struct MasterPart {
  std::string task;
  WorkerInterface* worker = nullptr;
  std::string graph_handle;
};

// A client graph whose parts are registered with their workers.
struct MasterSession::RegisteredGraph {
  // The signature, its feeds and fetch keys; its partitions were handed to
  // the workers and are empty here.
  std::unique_ptr<ClientGraph> cg;
  std::vector<MasterPart> parts;
  int client_part = -1;  // the part holding feeds and fetches
};

struct MasterSession::PartialRunState {
  std::shared_ptr<const RegisteredGraph> rg;
  int64_t step_id = 0;
  std::vector<bool> fed, fetched;
};

// One step (or one call of a partial run) in flight.
// One step's fan-out to the workers and its fan-in: one RunGraph per
// registered part, and WhenDone for each reply; the last reply finishes the
// step (MasterSession::FinishStep) with its best error.
struct MasterSession::StepCall {
  // Records part i's reply. The first failure that is not an echo of
  // another task's (errors::IsDerived) cancels the other parts' calls.
  // Returns true for the last reply.
  bool WhenDone(size_t i, const absl::Status& s);

  std::shared_ptr<MasterSession> session;
  std::shared_ptr<const RegisteredGraph> rg;
  int64_t step_id = 0;
  StepKind kind = StepKind::kWhole;
  std::vector<int> fetch_indices;
  RunMetadata* metadata = nullptr;
  CancellationManager* call_cm = nullptr;
  CancellationToken call_token = 0;
  StepDone done;
  std::vector<RunGraphRequest> reqs;
  std::vector<RunGraphResponse> resps;
  std::vector<std::unique_ptr<CallOptions>> opts;
  // The copies of the feeds in `reqs`, held in the memory budget.
  memory_budget::Reservation feed_copies;

  absl::Mutex mu;
  int pending ABSL_GUARDED_BY(mu) = 0;
  absl::Status first_error ABSL_GUARDED_BY(mu);
  std::string failed_task ABSL_GUARDED_BY(mu);
  bool others_cancelled ABSL_GUARDED_BY(mu) = false;
};

namespace {

// Puts fetched[index[i]] into out(i) for each i in order: a value fetched
// under several names is copied for all but its last use, which takes it,
// so a large fetch is never held twice.
template <class Out>
void PlaceFetches(const std::vector<int>& index, std::vector<TensorProto>* fetched, Out out) {
  std::vector<int> last_use(fetched->size(), -1);
  for (size_t i = 0; i < index.size(); ++i) last_use[index[i]] = static_cast<int>(i);
  for (size_t i = 0; i < index.size(); ++i) {
    TensorProto* dst = out(static_cast<int>(i));
    TensorProto& value = (*fetched)[index[i]];
    if (last_use[index[i]] == static_cast<int>(i)) {
      dst->Swap(&value);
    } else {
      *dst = value;
    }
  }
}

// How much longer than a step's timeout the master waits for a worker's
// RunGraph: the worker's own DeadlineExceeded (naming the Recv keys it waits
// for) arrives first.
constexpr int64_t kWorkerDeadlineSlackMs = 1000;
// RegisterGraph of one partition: its worker builds the graph's executors.
constexpr int64_t kRegisterGraphCallMs = 60000;
// DeregisterGraph of the partitions already registered when registering
// another one failed.
constexpr int64_t kUndoRegisterGraphCallMs = 10000;
// Each DeregisterGraph and DeleteWorkerSession call of a session's Close (or
// of its destruction, for DeregisterGraph).
constexpr int64_t kCloseSessionCallMs = 5000;
// The GetStatus that asks a worker whose call failed whether it restarted
// (its devices then carry new incarnations).
constexpr int64_t kWorkerRestartProbeCallMs = 2000;

std::string TaskOf(const std::string& device) {
  ParsedDeviceName p;
  device_name::Parse(device, &p);
  return device_name::TaskName(p);
}

int64_t NewStepId() { return static_cast<int64_t>(random::New64() & 0x7fffffffffffffffull) | 1; }

absl::Status NameTask(const std::string& task, const absl::Status& s) {
  if (absl::StrContains(s.message(), task)) return s;
  return absl::Status(s.code(), absl::StrCat(s.message(), " (on task ", task, ")"));
}

}  // namespace

MasterSession::MasterSession(std::string handle, ConfigProto config,
                             std::unique_ptr<DeviceSet> devices,
                             std::shared_ptr<WorkerCache> worker_cache, ThreadPool* pool)
    : handle_(std::move(handle)),
      config_(std::move(config)),
      devices_(std::move(devices)),
      worker_cache_(std::move(worker_cache)),
      pool_(pool),
      execution_state_(GraphExecutionState::Options{
          devices_.get(), config_.allow_soft_placement(), config_.log_device_placement(),
          config_.graph_options().enable_bfloat16_sendrecv(), "_m",
          config_.feed_shapes_unchecked()}),
      cleanups_(worker_cache_) {}

MasterSession::~MasterSession() { DeregisterAll(); }

absl::Status MasterSession::Create(const GraphDef& graph_def) {
  return execution_state_.Create(graph_def);
}

absl::Status MasterSession::Extend(const ExtendSessionRequest& req, ExtendSessionResponse* resp) {
  absl::MutexLock lock(&mu_);
  if (closed_) return SessionClosedError();
  if (req.current_graph_version() != graph_version_) {
    return errors::FailedPrecondition("session ", handle_, " graph version is ", graph_version_,
                                      ", the request extends version ",
                                      req.current_graph_version());
  }
  DF_RETURN_IF_ERROR(execution_state_.Extend(req.graph_def()));
  resp->set_new_graph_version(++graph_version_);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const MasterSession::RegisteredGraph>> MasterSession::FindRegistered(
    const RunSignature& sig) {
  absl::MutexLock lock(&mu_);
  if (closed_) return SessionClosedError();
  auto it = registered_.find(sig.key);
  if (it != registered_.end()) return it->second;
  return std::shared_ptr<const RegisteredGraph>();
}

absl::StatusOr<std::shared_ptr<const MasterSession::RegisteredGraph>> MasterSession::GetOrBuild(
    const RunSignature& sig) {
  DF_ASSIGN_OR_RETURN(std::shared_ptr<const RegisteredGraph> found, FindRegistered(sig));
  if (found != nullptr) return found;
  absl::MutexLock build_lock(&build_mu_);
  DF_ASSIGN_OR_RETURN(found, FindRegistered(sig));
  if (found != nullptr) return found;
  DF_ASSIGN_OR_RETURN(std::shared_ptr<const RegisteredGraph> built, Build(sig));
  absl::MutexLock lock(&mu_);
  registered_[sig.key] = built;
  return built;
}

void MasterSession::WithRegistered(
    const RunSignature& sig,
    std::function<void(absl::StatusOr<std::shared_ptr<const RegisteredGraph>>)> then) {
  absl::StatusOr<std::shared_ptr<const RegisteredGraph>> found = FindRegistered(sig);
  if (!found.ok() || *found != nullptr) {
    then(std::move(found));
    return;
  }
  pool_->Schedule(
      [self = shared_from_this(), sig, then = std::move(then)] { then(self->GetOrBuild(sig)); });
}

absl::StatusOr<std::shared_ptr<const MasterSession::RegisteredGraph>> MasterSession::Build(
    const RunSignature& sig) {
  DF_ASSIGN_OR_RETURN(std::unique_ptr<ClientGraph> cg,
                      execution_state_.BuildClientGraph(
                          sig, PartitionBy::kTask, subgraph::FeedFetchConvention::kRendezvous));
  auto rg = std::make_shared<RegisteredGraph>();
  const std::string client_task = TaskOf(devices_->client_device()->name());
  std::vector<std::string> tasks;
  for (const auto& [task, def] : cg->partitions) tasks.push_back(task);
  std::sort(tasks.begin(), tasks.end());
  for (const std::string& task : tasks) {
    MasterPart part;
    part.task = task;
    DF_ASSIGN_OR_RETURN(part.worker, worker_cache_->GetWorker(task));
    if (task == client_task) rg->client_part = static_cast<int>(rg->parts.size());
    rg->parts.push_back(std::move(part));
  }
  if ((!sig.feeds.empty() || !sig.fetches.empty()) && rg->client_part < 0) {
    return errors::Internal("no partition holds the client's feeds and fetches");
  }
  // Register every partition; on failure deregister what was registered.
  const size_t n = rg->parts.size();
  std::vector<RegisterGraphRequest> reqs(n);
  std::vector<RegisterGraphResponse> resps(n);
  std::vector<CallOptions> opts(n);
  const std::vector<absl::Status> statuses = CallAllAndWait(n, [&](size_t i, StatusCallback done) {
    reqs[i].set_session_handle(handle_);
    *reqs[i].mutable_graph_def() = std::move(cg->partitions[rg->parts[i].task]);
    *reqs[i].mutable_graph_options() = config_.graph_options();
    opts[i].set_timeout_ms(kRegisterGraphCallMs);
    rg->parts[i].worker->RegisterGraphAsync(&reqs[i], &resps[i], &opts[i], std::move(done));
  });
  cg->partitions.clear();
  for (size_t i = 0; i < n; ++i) rg->parts[i].graph_handle = resps[i].graph_handle();
  for (size_t i = 0; i < n; ++i) {
    if (statuses[i].ok()) continue;
    for (size_t j = 0; j < n; ++j) {
      if (!statuses[j].ok()) continue;
      DeregisterGraphRequest req;
      req.set_session_handle(handle_);
      req.set_graph_handle(rg->parts[j].graph_handle);
      DeregisterGraphResponse resp;
      CallOptions dopts;
      dopts.set_timeout_ms(kUndoRegisterGraphCallMs);
      CallAndWait([&](StatusCallback cb) {
        rg->parts[j].worker->DeregisterGraphAsync(&req, &resp, &dopts, std::move(cb));
      }).IgnoreError();
    }
    return CallAndWait(
        [&](StatusCallback cb) { WorkerErrorAsync(rg->parts[i].task, statuses[i], cb); });
  }
  rg->cg = std::move(cg);
  return std::shared_ptr<const RegisteredGraph>(std::move(rg));
}

void MasterSession::WorkerErrorAsync(const std::string& task, const absl::Status& s,
                                     std::function<void(absl::Status)> done) {
  const bool maybe_restarted = s.code() == absl::StatusCode::kNotFound ||
                               s.code() == absl::StatusCode::kUnavailable ||
                               s.code() == absl::StatusCode::kAborted;
  absl::StatusOr<WorkerInterface*> worker =
      maybe_restarted ? worker_cache_->GetWorker(task) : absl::StatusOr<WorkerInterface*>();
  if (!maybe_restarted || !worker.ok()) {
    done(NameTask(task, s));
    return;
  }
  // A worker that came back with new devices is a different worker: the
  // graphs and state this session had there are gone.
  struct Probe {
    GetStatusRequest req;
    GetStatusResponse resp;
    CallOptions opts;
  };
  auto probe = std::make_shared<Probe>();
  probe->opts.set_timeout_ms(kWorkerRestartProbeCallMs);
  (*worker)->GetStatusAsync(
      &probe->req, &probe->resp, &probe->opts,
      [self = shared_from_this(), probe, task, s, done = std::move(done)](const absl::Status& st) {
        if (st.ok()) {
          for (const DeviceAttributes& d : probe->resp.device_attributes()) {
            const DeviceAttributes* known = self->devices_->FindDeviceByName(d.name());
            if (known != nullptr && known->incarnation() != d.incarnation()) {
              done(errors::Aborted("task ", task,
                                   " was restarted (device incarnation changed); the session's "
                                   "state there is lost, create a new session: ",
                                   s.message()));
              return;
            }
          }
        }
        done(NameTask(task, s));
      });
}

void MasterSession::RunStepAsync(std::shared_ptr<const RegisteredGraph> rg, int64_t step_id,
                                 const RunOptions& options, std::vector<const TensorProto*> feeds,
                                 std::vector<std::string> feed_names,
                                 std::vector<int> fetch_indices, RunMetadata* metadata,
                                 StepKind kind, CancellationManager* call_cm, StepDone done) {
  const ClientGraph& cg = *rg->cg;
  // Feeds are checked here, as a local session checks them, so a wrong
  // value never reaches a worker's kernels.
  int64_t feed_bytes = 0;
  for (size_t f = 0; f < feeds.size(); ++f) {
    if (feeds[f] == nullptr) continue;
    feed_bytes += static_cast<int64_t>(feeds[f]->ByteSizeLong());
    TensorShape shape;
    absl::Status s = errors::Annotate(TensorShape::FromProto(feeds[f]->tensor_shape(), &shape),
                                      absl::StrCat("feed '", feed_names[f], "': "));
    if (s.ok()) s = cg.CheckFeed(f, feed_names[f], feeds[f]->dtype(), shape);
    if (!s.ok()) {
      done(s, {});
      return;
    }
  }
  auto feed_copies = memory_budget::Reservation::Make(
      feed_bytes, absl::StrCat("copying ", feeds.size(), " feeds for the workers"));
  if (!feed_copies.ok()) {
    done(feed_copies.status(), {});
    return;
  }
  auto call = std::make_shared<StepCall>();
  call->feed_copies = *std::move(feed_copies);
  call->session = shared_from_this();
  call->rg = rg;
  call->step_id = step_id;
  call->kind = kind;
  call->fetch_indices = std::move(fetch_indices);
  call->metadata = metadata;
  call->done = std::move(done);
  const size_t n = rg->parts.size();
  call->reqs.resize(n);
  call->resps.resize(n);
  int64_t timeout = options.timeout_in_ms();
  if (timeout <= 0) timeout = config_.operation_timeout_in_ms();
  const bool trace = options.trace_level() != RunOptions::NO_TRACE;
  for (size_t i = 0; i < n; ++i) {
    RunGraphRequest& req = call->reqs[i];
    req.set_session_handle(handle_);
    req.set_graph_handle(rg->parts[i].graph_handle);
    req.set_step_id(step_id);
    req.set_is_partial(kind != StepKind::kWhole);
    req.set_is_last_partial_run(kind == StepKind::kLastPartialCall);
    req.mutable_exec_opts()->set_record_timeline(trace);
    req.mutable_exec_opts()->set_record_partition_graphs(options.output_partition_graphs());
    if (timeout > 0) req.set_timeout_in_ms(timeout);
    for (int64_t done_step : cleanups_.Take(rg->parts[i].task)) req.add_cleanup_step_ids(done_step);
    if (static_cast<int>(i) == rg->client_part) {
      for (size_t f = 0; f < feeds.size(); ++f) {
        if (feeds[f] == nullptr) continue;
        NamedTensorProto* send = req.add_send();
        send->set_name(cg.feeds[f].key);
        *send->mutable_tensor() = *feeds[f];
      }
      for (int f : call->fetch_indices) req.add_recv_key(cg.fetch_keys[f]);
    }
    call->opts.push_back(std::make_unique<CallOptions>());
    // Each worker ends the step itself at `timeout`, naming what it waits
    // for; the call's own deadline comes later, for a worker that cannot.
    if (timeout > 0) call->opts.back()->set_timeout_ms(timeout + kWorkerDeadlineSlackMs);
  }
  {
    absl::MutexLock lock(&call->mu);
    call->pending = static_cast<int>(n);
  }
  if (call_cm != nullptr) {
    call->call_cm = call_cm;
    call->call_token = call_cm->get_cancellation_token();
    std::weak_ptr<StepCall> weak = call;
    if (!call_cm->RegisterCallback(call->call_token, [weak] {
          if (std::shared_ptr<StepCall> c = weak.lock()) {
            for (auto& opts : c->opts) opts->StartCancel();
          }
        })) {
      call->done(errors::Cancelled("step ", step_id, " was cancelled by its caller"), {});
      return;
    }
  }
  if (n == 0) {
    FinishStep(call);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    rg->parts[i].worker->RunGraphAsync(&call->reqs[i], &call->resps[i], call->opts[i].get(),
                                       [call, i](const absl::Status& s) {
                                         if (call->WhenDone(i, s)) call->session->FinishStep(call);
                                       });
  }
}

bool MasterSession::StepCall::WhenDone(size_t i, const absl::Status& s) {
  bool cancel_others = false;
  bool last;
  {
    absl::MutexLock lock(&mu);
    if (!s.ok()) {
      // Cancelled and derived replies are usually echoes of another task's
      // failure: report the cause.
      if (errors::IsBetterCause(s, first_error)) {
        first_error = s;
        failed_task = rg->parts[i].task;
      }
      // A derived reply means the task that failed is alive and finishing
      // its own step with the cause: cancelling its call now would lose
      // that cause to a local Cancelled.
      if (!errors::IsDerived(s) && !others_cancelled) others_cancelled = cancel_others = true;
    }
    last = --pending == 0;
  }
  if (cancel_others) {
    for (size_t j = 0; j < opts.size(); ++j) {
      if (j != i) opts[j]->StartCancel();
    }
  }
  return last;
}

void MasterSession::FinishStep(const std::shared_ptr<StepCall>& call) {
  absl::Status first_error;
  std::string failed_task;
  {
    absl::MutexLock lock(&call->mu);
    first_error = call->first_error;
    failed_task = call->failed_task;
  }
  if (call->call_cm != nullptr) call->call_cm->TryDeregisterCallback(call->call_token);
  const RegisteredGraph& rg = *call->rg;
  // Every worker drops the step's rendezvous, whatever happened: a step
  // that succeeded with the next RunGraph to that worker (or a flush soon
  // after), a failed one at once.
  if (first_error.ok() && call->kind != StepKind::kPartialCall) {
    for (const MasterPart& part : rg.parts) cleanups_.Owe(part.task, call->step_id);
  } else if (!first_error.ok()) {
    for (const MasterPart& part : rg.parts) cleanups_.SendNow(part.task, call->step_id);
  }
  if (!first_error.ok()) {
    WorkerErrorAsync(failed_task, errors::StripDerived(first_error),
                     [call](absl::Status s) { call->done(std::move(s), {}); });
    return;
  }
  std::vector<TensorProto> fetched;
  if (rg.client_part >= 0) {
    RunGraphResponse& resp = call->resps[rg.client_part];
    absl::flat_hash_map<std::string, TensorProto*> by_key;
    for (NamedTensorProto& t : *resp.mutable_recv()) by_key[t.name()] = t.mutable_tensor();
    fetched.resize(call->fetch_indices.size());
    for (size_t k = 0; k < call->fetch_indices.size(); ++k) {
      const int f = call->fetch_indices[k];
      auto it = by_key.find(rg.cg->fetch_keys[f]);
      if (it == by_key.end()) {
        call->done(errors::Internal("worker ", rg.parts[rg.client_part].task,
                                    " did not return fetch '", rg.cg->signature.fetches[f], "'"),
                   {});
        return;
      }
      fetched[k].Swap(it->second);
    }
  }
  if (call->metadata != nullptr) {
    for (const RunGraphResponse& resp : call->resps) {
      for (const auto& dev : resp.step_stats().dev_stats()) {
        *call->metadata->mutable_step_stats()->add_dev_stats() = dev;
      }
      for (const GraphDef& g : resp.partition_graph()) *call->metadata->add_partition_graphs() = g;
    }
  }
  call->done(absl::OkStatus(), std::move(fetched));
}

void MasterSession::RunAsync(const RunStepRequest* req, RunStepResponse* resp,
                             CancellationManager* call_cm, Done done) {
  if (!req->partial_run_handle().empty()) {
    PartialRunAsync(req, resp, call_cm, std::move(done));
    return;
  }
  std::vector<std::string> feed_names;
  for (const NamedTensorProto& f : req->feed()) feed_names.push_back(f.name());
  std::vector<std::string> fetches(req->fetch().begin(), req->fetch().end());
  std::vector<std::string> targets(req->target().begin(), req->target().end());
  RunSignature sig;
  RunSignatureIndex index;
  absl::Status s = NormalizeRunSignature(feed_names, fetches, targets, &sig, &index);
  if (!s.ok()) {
    done(s);
    return;
  }
  // Feeds in the signature's order.
  std::vector<const TensorProto*> feeds(sig.feeds.size());
  std::vector<std::string> names(sig.feeds.size());
  for (int i = 0; i < req->feed_size(); ++i) {
    feeds[index.feed_index[i]] = &req->feed(i).tensor();
    names[index.feed_index[i]] = req->feed(i).name();
  }
  const size_t num_fetches = sig.fetches.size();
  WithRegistered(sig, [self = shared_from_this(), req, resp, call_cm, done = std::move(done),
                       feeds = std::move(feeds), names = std::move(names),
                       fetch_index = std::move(index.fetch_index), num_fetches](
                          absl::StatusOr<std::shared_ptr<const RegisteredGraph>> rg) mutable {
    if (!rg.ok()) {
      done(rg.status());
      return;
    }
    std::vector<int> all(num_fetches);
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    self->RunStepAsync(*std::move(rg), NewStepId(), req->options(), std::move(feeds),
                       std::move(names), std::move(all), resp->mutable_metadata(), StepKind::kWhole,
                       call_cm,
                       [req, resp, done = std::move(done), fetch_index = std::move(fetch_index)](
                           absl::Status s, std::vector<TensorProto> fetched) {
                         if (!s.ok()) {
                           done(s);
                           return;
                         }
                         PlaceFetches(fetch_index, &fetched, [&](int i) {
                           NamedTensorProto* out = resp->add_tensor();
                           out->set_name(req->fetch(i));
                           return out->mutable_tensor();
                         });
                         done(absl::OkStatus());
                       });
  });
}

absl::Status MasterSession::MakeCallable(const MakeCallableRequest& req,
                                         MakeCallableResponse* resp) {
  const CallableOptions& options = req.options();
  std::vector<std::string> feeds(options.feed().begin(), options.feed().end());
  std::vector<std::string> fetches(options.fetch().begin(), options.fetch().end());
  std::vector<std::string> targets(options.target().begin(), options.target().end());
  Callable c;
  DF_RETURN_IF_ERROR(NormalizeRunSignature(feeds, fetches, targets, &c.sig, &c.index));
  c.feed_names = std::move(feeds);
  c.run_options = options.run_options();
  // Build (and register) now, so errors surface here and runs are fast.
  DF_RETURN_IF_ERROR(GetOrBuild(c.sig).status());
  absl::MutexLock lock(&mu_);
  const int64_t handle = next_callable_++;
  callables_[handle] = std::move(c);
  resp->set_handle(handle);
  return absl::OkStatus();
}

void MasterSession::RunCallableAsync(const RunCallableRequest* req, RunCallableResponse* resp,
                                     CancellationManager* call_cm, Done done) {
  Callable c;
  {
    absl::MutexLock lock(&mu_);
    auto it = callables_.find(req->handle());
    if (it == callables_.end()) {
      done(errors::InvalidArgument("callable handle ", req->handle(), " is not valid in session ",
                                   handle_));
      return;
    }
    c = it->second;
  }
  if (req->feed_size() != static_cast<int>(c.feed_names.size())) {
    done(errors::InvalidArgument("callable ", req->handle(), " takes ", c.feed_names.size(),
                                 " feeds, got ", req->feed_size()));
    return;
  }
  std::vector<const TensorProto*> feeds(c.sig.feeds.size());
  std::vector<std::string> names(c.sig.feeds.size());
  for (int i = 0; i < req->feed_size(); ++i) {
    feeds[c.index.feed_index[i]] = &req->feed(i);
    names[c.index.feed_index[i]] = c.feed_names[i];
  }
  const RunSignature sig = c.sig;  // `c` moves into the callback
  WithRegistered(sig, [self = shared_from_this(), req, resp, call_cm, done = std::move(done),
                       feeds = std::move(feeds), names = std::move(names), c = std::move(c)](
                          absl::StatusOr<std::shared_ptr<const RegisteredGraph>> rg) mutable {
    if (!rg.ok()) {
      done(rg.status());
      return;
    }
    std::vector<int> all(c.sig.fetches.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    self->RunStepAsync(
        *std::move(rg), NewStepId(), c.run_options, std::move(feeds), std::move(names),
        std::move(all), resp->mutable_metadata(), StepKind::kWhole, call_cm,
        [resp, done = std::move(done), fetch_index = c.index.fetch_index](
            absl::Status s, std::vector<TensorProto> fetched) {
          if (!s.ok()) {
            done(s);
            return;
          }
          PlaceFetches(fetch_index, &fetched, [&](int /*i*/) { return resp->add_fetch(); });
          done(absl::OkStatus());
        });
  });
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
  std::vector<std::string> feeds(req.feed().begin(), req.feed().end());
  std::vector<std::string> fetches(req.fetch().begin(), req.fetch().end());
  std::vector<std::string> targets(req.target().begin(), req.target().end());
  RunSignature sig;
  DF_RETURN_IF_ERROR(NormalizeRunSignature(feeds, fetches, targets, &sig));
  auto run = std::make_shared<PartialRunState>();
  DF_ASSIGN_OR_RETURN(run->rg, GetOrBuild(sig));
  run->step_id = NewStepId();
  run->fed.assign(sig.feeds.size(), false);
  run->fetched.assign(sig.fetches.size(), false);
  absl::MutexLock lock(&mu_);
  const std::string handle = absl::StrCat("partial_", next_partial_++);
  partial_runs_[handle] = std::move(run);
  resp->set_partial_run_handle(handle);
  return absl::OkStatus();
}

void MasterSession::PartialRunAsync(const RunStepRequest* req, RunStepResponse* resp,
                                    CancellationManager* call_cm, Done done) {
  std::shared_ptr<PartialRunState> run;
  {
    absl::MutexLock lock(&mu_);
    auto it = partial_runs_.find(req->partial_run_handle());
    if (it == partial_runs_.end()) {
      done(errors::InvalidArgument("partial run handle '", req->partial_run_handle(),
                                   "' is not valid (unknown, or its run has finished)"));
      return;
    }
    run = it->second;
  }
  const RunSignature& sig = run->rg->cg->signature;
  std::vector<const TensorProto*> feeds(sig.feeds.size(), nullptr);
  std::vector<std::string> names(sig.feeds.size());
  std::vector<int> fetch_indices;
  // Finds `name` in the sorted `list`; -1 when absent.
  auto position = [](const std::vector<std::string>& list, const std::string& name) {
    auto it = std::lower_bound(list.begin(), list.end(), name);
    return it != list.end() && *it == name ? static_cast<int>(it - list.begin()) : -1;
  };
  bool last = false;
  // Marks this call's feeds and fetches in the run; an error leaves it as
  // it was. Runs under mu_, so `done` is called only after it.
  auto mark = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
    for (const NamedTensorProto& f : req->feed()) {
      std::string name;
      DF_RETURN_IF_ERROR(CanonicalTensorName(f.name(), "feed", &name));
      const int i = position(sig.feeds, name);
      if (i < 0) {
        return errors::InvalidArgument("feed '", f.name(), "' was not given to PartialRunSetup");
      }
      if (run->fed[i] || feeds[i] != nullptr) {
        return errors::InvalidArgument("feed '", f.name(), "' was already fed in this partial run");
      }
      feeds[i] = &f.tensor();
      names[i] = f.name();
    }
    for (const std::string& f : req->fetch()) {
      std::string name;
      DF_RETURN_IF_ERROR(CanonicalTensorName(f, "fetch", &name));
      const int i = position(sig.fetches, name);
      if (i < 0) {
        return errors::InvalidArgument("fetch '", f, "' was not given to PartialRunSetup");
      }
      if (run->fetched[i]) {
        return errors::InvalidArgument("fetch '", f, "' was already fetched in this partial run");
      }
      fetch_indices.push_back(i);
    }
    for (size_t i = 0; i < feeds.size(); ++i) run->fed[i] = run->fed[i] || feeds[i] != nullptr;
    for (int i : fetch_indices) run->fetched[i] = true;
    last = std::all_of(run->fed.begin(), run->fed.end(), [](bool b) { return b; }) &&
           std::all_of(run->fetched.begin(), run->fetched.end(), [](bool b) { return b; });
    return absl::OkStatus();
  };
  absl::Status marked;
  {
    absl::MutexLock lock(&mu_);
    marked = mark();
  }
  if (!marked.ok()) {
    done(marked);
    return;
  }
  RunStepAsync(run->rg, run->step_id, req->options(), std::move(feeds), std::move(names),
               std::move(fetch_indices), resp->mutable_metadata(),
               last ? StepKind::kLastPartialCall : StepKind::kPartialCall, call_cm,
               [self = shared_from_this(), req, resp, last, done = std::move(done)](
                   absl::Status s, std::vector<TensorProto> fetched) {
                 if (!s.ok() || last) {
                   absl::MutexLock lock(&self->mu_);
                   self->partial_runs_.erase(req->partial_run_handle());
                 }
                 if (!s.ok()) {
                   done(s);
                   return;
                 }
                 for (size_t k = 0; k < fetched.size(); ++k) {
                   NamedTensorProto* out = resp->add_tensor();
                   out->set_name(req->fetch(static_cast<int>(k)));
                   *out->mutable_tensor() = std::move(fetched[k]);
                 }
                 done(absl::OkStatus());
               });
}

void MasterSession::DeregisterAll() {
  std::map<std::string, std::shared_ptr<const RegisteredGraph>> graphs;
  {
    absl::MutexLock lock(&mu_);
    graphs.swap(registered_);
  }
  for (auto& [key, rg] : graphs) {
    for (const MasterPart& part : rg->parts) {
      DeregisterGraphRequest req;
      req.set_session_handle(handle_);
      req.set_graph_handle(part.graph_handle);
      DeregisterGraphResponse resp;
      CallOptions opts;
      opts.set_timeout_ms(kCloseSessionCallMs);
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
  cleanups_.Flush();
  DeregisterAll();
  // Workers drop the session's shared kernels and its cluster.
  for (const std::string& task : worker_cache_->ListWorkers()) {
    absl::StatusOr<WorkerInterface*> worker = worker_cache_->GetWorker(task);
    if (!worker.ok()) continue;
    DeleteWorkerSessionRequest req;
    req.set_session_handle(handle_);
    DeleteWorkerSessionResponse resp;
    CallOptions opts;
    opts.set_timeout_ms(kCloseSessionCallMs);
    CallAndWait([&](StatusCallback cb) {
      (*worker)->DeleteWorkerSessionAsync(&req, &resp, &opts, std::move(cb));
    }).IgnoreError();
  }
  return absl::OkStatus();
}

}  // namespace distflow
