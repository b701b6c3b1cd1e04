#include "distflow/distributed_runtime/worker.h"

#include <algorithm>

#include "distflow/common_runtime/device_mgr.h"
#include "distflow/common_runtime/step_stats_collector.h"
#include "distflow/common_runtime/step_watchdog.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/core/timer.h"
#include "distflow/distributed_runtime/rendezvous_mgr.h"
#include "distflow/distributed_runtime/transfer_stats.h"
#include "distflow/framework/resource_mgr.h"
#include "distflow/framework/tensor_proto.h"
#include "distflow/kernels/var.h"

namespace distflow {

Worker::Worker(WorkerEnv* env) : env_(env), graph_mgr_(env) {}

Worker::~Worker() = default;

void Worker::GetStatus(const GetStatusRequest& /*req*/, GetStatusResponse* resp) {
  for (const DeviceAttributes& a : env_->device_mgr->ListDeviceAttributes()) {
    *resp->add_device_attributes() = a;
  }
  for (Device* d : env_->device_mgr->ListDevices()) {
    if (d->resource_manager() == nullptr) continue;
    for (const ResourceMgr::Listed& r : d->resource_manager()->List()) {
      if (dynamic_cast<const Var*>(r.resource.get()) == nullptr) continue;
      resp->set_variables(resp->variables() + 1);
      resp->set_variable_bytes(resp->variable_bytes() + r.resource->MemoryUsed());
    }
  }
  for (const TensorTransferRow& row : TensorTransfers()) {
    if (row.sent) {
      resp->set_tensor_bytes_sent(resp->tensor_bytes_sent() + row.bytes);
    } else {
      resp->set_tensor_bytes_received(resp->tensor_bytes_received() + row.bytes);
    }
  }
}

absl::Status Worker::CreateWorkerSession(const CreateWorkerSessionRequest& req) {
  if (req.server_def().cluster().job_size() == 0) return absl::OkStatus();
  DF_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::FromClusterDef(req.server_def().cluster()));
  std::shared_ptr<WorkerCache> cache = env_->worker_cache_factory(std::move(cluster));
  absl::MutexLock lock(&mu_);
  session_caches_[req.session_handle()] = std::move(cache);
  return absl::OkStatus();
}

absl::Status Worker::DeleteWorkerSession(const DeleteWorkerSessionRequest& req) {
  graph_mgr_.DeregisterSession(req.session_handle());
  absl::MutexLock lock(&mu_);
  session_caches_.erase(req.session_handle());
  return absl::OkStatus();
}

std::shared_ptr<WorkerCache> Worker::CacheForSession(const std::string& session) {
  absl::MutexLock lock(&mu_);
  auto it = session_caches_.find(session);
  return it == session_caches_.end() ? env_->worker_cache : it->second;
}

absl::Status Worker::RegisterGraph(const RegisterGraphRequest& req, RegisterGraphResponse* resp) {
  std::string handle;
  DF_RETURN_IF_ERROR(errors::Annotate(
      graph_mgr_.Register(req.session_handle(), req.graph_def(), req.graph_options(), &handle),
      absl::StrCat(env_->task_name, ": ")));
  resp->set_graph_handle(handle);
  return absl::OkStatus();
}

absl::Status Worker::DeregisterGraph(const DeregisterGraphRequest& req) {
  return graph_mgr_.Deregister(req.graph_handle());
}

absl::Status Worker::CleanupGraph(const CleanupGraphRequest& req) {
  env_->rendezvous_mgr->Cleanup(req.step_id());
  return absl::OkStatus();
}

absl::Status Worker::CleanupAll(const CleanupAllRequest& /*req*/) {
  env_->rendezvous_mgr->CleanupAll();
  return absl::OkStatus();
}

namespace {

// Everything one RunGraph call keeps until it finishes.
struct RunGraphCall {
  RefPtr<RemoteRendezvous> rendezvous;
  CancellationManager step_cm;
  CancellationToken call_token = 0;
  CancellationManager* call_cm = nullptr;
  std::unique_ptr<StepStatsCollector> collector;
  std::unique_ptr<StepWatchdog> watchdog;
  Timer::Id deadline_timer = 0;
  absl::Mutex mu;
  // Set when the step's own deadline (RunGraphRequest.timeout_in_ms) passed.
  absl::Status deadline ABSL_GUARDED_BY(mu);
};

// Ends a step that ran past its deadline with DeadlineExceeded naming what
// it still waits for; the step's error becomes that status.
void ExpireStep(RunGraphCall* call, const std::string& task, int64_t step_id, int64_t timeout_ms) {
  const absl::Status deadline =
      errors::DeadlineExceeded("step ", step_id, " timed out after ", timeout_ms, " ms on ", task,
                               ", ", DescribePendingReceives(call->rendezvous->PendingReceives()));
  {
    absl::MutexLock lock(&call->mu);
    call->deadline = deadline;
  }
  call->rendezvous->StartAbort(deadline);
  call->step_cm.StartCancel();
}

}  // namespace

void Worker::RunGraphAsync(CancellationManager* call_cm, const RunGraphRequest* req,
                           RunGraphResponse* resp, Done done) {
  // At most what one master can owe (DeferredCleanups::kMaxOwed) is read.
  constexpr int kMaxCleanups = 4096;
  for (int i = 0; i < std::min(req->cleanup_step_ids_size(), kMaxCleanups); ++i) {
    if (req->cleanup_step_ids(i) != req->step_id()) {
      env_->rendezvous_mgr->Cleanup(req->cleanup_step_ids(i));
    }
  }
  if (req->is_partial()) {
    RunPartialGraphAsync(call_cm, req, resp, std::move(done));
    return;
  }
  auto call = std::make_shared<RunGraphCall>();
  call->rendezvous = env_->rendezvous_mgr->Find(req->step_id());
  call->rendezvous->Initialize(CacheForSession(req->session_handle()));
  call->call_cm = call_cm;
  if (call_cm != nullptr) {
    call->call_token = call_cm->get_cancellation_token();
    // The callback holds the call while it cancels: cancelling can finish
    // the step, whose completion drops the last other reference, and the
    // step's CancellationManager must outlive its own StartCancel.
    std::weak_ptr<RunGraphCall> weak = call;
    if (!call_cm->RegisterCallback(call->call_token, [weak] {
          if (std::shared_ptr<RunGraphCall> c = weak.lock()) c->step_cm.StartCancel();
        })) {
      done(errors::Cancelled("RunGraph of step ", req->step_id(), " was cancelled"));
      return;
    }
  }
  // Feeds go into the rendezvous under the keys the master computed.
  for (const NamedTensorProto& send : req->send()) {
    Rendezvous::ParsedKey key;
    absl::Status s = Rendezvous::ParseKey(send.name(), &key);
    Tensor value;
    if (s.ok()) s = TensorFromProto(send.tensor(), &value);
    if (s.ok()) s = call->rendezvous->Send(key, Rendezvous::Args(), value, false);
    if (!s.ok()) {
      if (call_cm != nullptr) call_cm->TryDeregisterCallback(call->call_token);
      done(errors::Annotate(s, absl::StrCat("RunGraph feed '", send.name(), "': ")));
      return;
    }
  }
  if (req->exec_opts().record_timeline() || req->exec_opts().record_costs()) {
    call->collector = std::make_unique<StepStatsCollector>();
  }
  const int64_t step_id = req->step_id();
  const std::string handle = req->graph_handle();
  call->watchdog = std::make_unique<StepWatchdog>(
      absl::StrCat("step ", step_id, " on ", env_->task_name), call->rendezvous.get());
  if (req->timeout_in_ms() > 0) {
    std::weak_ptr<RunGraphCall> weak = call;
    call->deadline_timer = Timer::Default()->Schedule(
        absl::Milliseconds(req->timeout_in_ms()),
        [weak, task = env_->task_name, step_id, timeout_ms = req->timeout_in_ms()] {
          if (std::shared_ptr<RunGraphCall> c = weak.lock()) {
            ExpireStep(c.get(), task, step_id, timeout_ms);
          }
        });
  }
  uint64_t running_id;
  {
    std::weak_ptr<RunGraphCall> weak = call;
    absl::MutexLock lock(&mu_);
    running_id = next_running_++;
    running_.emplace(running_id, Running{step_id, handle, absl::Now(), call->rendezvous, [weak] {
                                           if (std::shared_ptr<RunGraphCall> c = weak.lock()) {
                                             c->step_cm.StartCancel();
                                           }
                                         }});
    ++steps_in_flight_;
  }
  graph_mgr_.ExecuteAsync(
      handle, step_id, call->rendezvous.get(), &call->step_cm, call->collector.get(),
      [this, call, req, resp, running_id, done = std::move(done)](absl::Status s) {
        {
          absl::MutexLock lock(&mu_);
          running_.erase(running_id);
        }
        if (call->call_cm != nullptr) call->call_cm->TryDeregisterCallback(call->call_token);
        call->watchdog.reset();
        if (call->deadline_timer != 0) Timer::Default()->Cancel(call->deadline_timer);
        {
          absl::MutexLock lock(&call->mu);
          if (!s.ok() && !call->deadline.ok()) s = call->deadline;
        }
        if (s.ok()) {
          for (const std::string& key_str : req->recv_key()) {
            Rendezvous::ParsedKey key;
            s = Rendezvous::ParseKey(key_str, &key);
            if (!s.ok()) break;
            Tensor value;
            bool is_dead = false;
            // The step is over, so every fetched value is already buffered.
            s = call->rendezvous->Recv(key, Rendezvous::Args(), &value, &is_dead, 1);
            if (!s.ok()) {
              s = errors::Internal("fetch '", key.edge_name, "' was not produced by step ",
                                   req->step_id(), ": ", s.message());
              break;
            }
            if (is_dead) {
              s = DeadFetchError(key.edge_name);
              break;
            }
            NamedTensorProto* out = resp->add_recv();
            out->set_name(key_str);
            s = TensorToProtoInBudget(value, out->mutable_tensor(),
                                      absl::StrCat("fetch '", key.edge_name, "'"));
            if (!s.ok()) break;
          }
        }
        if (s.ok() && call->collector != nullptr)
          call->collector->Finalize(resp->mutable_step_stats());
        if (s.ok() && req->exec_opts().record_partition_graphs()) {
          std::vector<GraphDef> parts;
          if (graph_mgr_.PartitionGraphs(req->graph_handle(), &parts).ok()) {
            for (auto& p : parts) *resp->add_partition_graph() = std::move(p);
          }
        }
        done(s);
        // Last: the worker may go once no step is in flight.
        absl::MutexLock lock(&mu_);
        --steps_in_flight_;
      });
}

struct Worker::PartialStep {
  RefPtr<RemoteRendezvous> rendezvous;
  CancellationManager cm;
  absl::Mutex mu;
  bool finished ABSL_GUARDED_BY(mu) = false;
  absl::Status status ABSL_GUARDED_BY(mu);
  std::vector<std::function<void(const absl::Status&)>> on_finish ABSL_GUARDED_BY(mu);
};

void Worker::RunPartialGraphAsync(CancellationManager* call_cm, const RunGraphRequest* req,
                                  RunGraphResponse* resp, Done done) {
  const int64_t step_id = req->step_id();
  std::shared_ptr<PartialStep> step;
  bool start = false;
  {
    absl::MutexLock lock(&mu_);
    auto& slot = partial_steps_[step_id];
    if (slot == nullptr) {
      slot = std::make_shared<PartialStep>();
      start = true;
    }
    step = slot;
  }
  if (start) {
    step->rendezvous = env_->rendezvous_mgr->Find(step_id);
    step->rendezvous->Initialize(CacheForSession(req->session_handle()));
    graph_mgr_.ExecuteAsync(req->graph_handle(), step_id, step->rendezvous.get(), &step->cm,
                            nullptr, [step](absl::Status s) {
                              std::vector<std::function<void(const absl::Status&)>> waiters;
                              {
                                absl::MutexLock lock(&step->mu);
                                step->finished = true;
                                step->status = s;
                                waiters.swap(step->on_finish);
                              }
                              for (auto& w : waiters) w(s);
                            });
  }
  for (const NamedTensorProto& send : req->send()) {
    Rendezvous::ParsedKey key;
    absl::Status s = Rendezvous::ParseKey(send.name(), &key);
    Tensor value;
    if (s.ok()) s = TensorFromProto(send.tensor(), &value);
    if (s.ok()) s = step->rendezvous->Send(key, Rendezvous::Args(), value, false);
    if (!s.ok()) {
      step->cm.StartCancel();
      done(errors::Annotate(s, absl::StrCat("RunGraph feed '", send.name(), "': ")));
      return;
    }
  }
  // Collect this call's fetches as they are produced, then (for the last
  // call) wait for the step to end.
  struct Pending {
    absl::Mutex mu;
    int left;
    absl::Status status;
    std::vector<Tensor> values;
  };
  auto pending = std::make_shared<Pending>();
  pending->left = req->recv_key_size() + 1;
  pending->values.resize(req->recv_key_size());
  const bool last = req->is_last_partial_run();
  auto finish_call = [this, step, step_id, pending, req, resp, last, done]() {
    absl::Status s;
    {
      absl::MutexLock lock(&pending->mu);
      s = pending->status;
    }
    auto reply = [this, step_id, pending, req, resp, done](absl::Status s) {
      if (s.ok()) {
        for (int i = 0; i < req->recv_key_size() && s.ok(); ++i) {
          NamedTensorProto* out = resp->add_recv();
          out->set_name(req->recv_key(i));
          s = TensorToProtoInBudget(pending->values[i], out->mutable_tensor(),
                                    absl::StrCat("fetch '", req->recv_key(i), "'"));
        }
      }
      done(s);
    };
    if (!s.ok()) step->cm.StartCancel();
    if (!last && s.ok()) {
      reply(s);
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      partial_steps_.erase(step_id);
    }
    absl::Status final_status;
    bool finished;
    {
      absl::MutexLock lock(&step->mu);
      finished = step->finished;
      if (finished) {
        final_status = s.ok() ? step->status : s;
      } else {
        step->on_finish.push_back([s, reply](const absl::Status& st) { reply(s.ok() ? st : s); });
      }
    }
    if (finished) reply(final_status);
  };
  auto one_done = [pending, finish_call](const absl::Status& s) {
    bool all;
    {
      absl::MutexLock lock(&pending->mu);
      if (!s.ok() && pending->status.ok()) pending->status = s;
      all = --pending->left == 0;
    }
    if (all) finish_call();
  };
  for (int i = 0; i < req->recv_key_size(); ++i) {
    Rendezvous::ParsedKey key;
    absl::Status s = Rendezvous::ParseKey(req->recv_key(i), &key);
    if (!s.ok()) {
      one_done(s);
      continue;
    }
    Rendezvous::Args args;
    args.cancellation_manager = call_cm;
    step->rendezvous->RecvAsync(key, args,
                                [pending, i, one_done, name = std::string(key.edge_name)](
                                    const absl::Status& s, const Rendezvous::Args&,
                                    const Rendezvous::Args&, const Tensor& value, bool is_dead) {
                                  if (s.ok() && is_dead) {
                                    one_done(DeadFetchError(name));
                                    return;
                                  }
                                  if (s.ok()) {
                                    absl::MutexLock lock(&pending->mu);
                                    pending->values[i] = value;
                                  }
                                  one_done(s);
                                });
  }
  one_done(absl::OkStatus());
}

void Worker::RecvTensorAsync(CancellationManager* call_cm, const RecvTensorRequest& req,
                             RecvTensorDone done) {
  Rendezvous::ParsedKey key;
  absl::Status s = Rendezvous::ParseKey(req.rendezvous_key(), &key);
  if (!s.ok()) {
    done(s, Tensor(), false);
    return;
  }
  ParsedDeviceName task;
  device_name::Parse(env_->task_name, &task);
  if (!key.src.has_job || key.src.job != task.job || !key.src.has_task ||
      key.src.task != task.task) {
    done(errors::InvalidArgument("RecvTensor for '", key.edge_name, "' asks ", env_->task_name,
                                 " for a tensor produced on ", key.src_device),
         Tensor(), false);
    return;
  }
  absl::StatusOr<RefPtr<RemoteRendezvous>> rendezvous =
      env_->rendezvous_mgr->FindForReceive(req.step_id());
  if (!rendezvous.ok()) {
    done(rendezvous.status(), Tensor(), false);
    return;
  }
  Rendezvous::Args args;
  args.cancellation_manager = call_cm;
  (*rendezvous)
      ->RecvLocalAsync(
          key, args,
          [mgr = env_->rendezvous_mgr, step_id = req.step_id(), done = std::move(done)](
              const absl::Status& s, const Rendezvous::Args&, const Rendezvous::Args&,
              const Tensor& value, bool is_dead) {
            done(s, value, is_dead);
            mgr->EndReceive(step_id);
          });
}

bool Worker::CancelStepsAndWait(absl::Time deadline) {
  std::vector<std::function<void()>> cancels;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, r] : running_) cancels.push_back(r.cancel);
  }
  // Outside the lock: a step may end, and take it, as it is cancelled.
  for (const std::function<void()>& cancel : cancels) cancel();
  absl::MutexLock lock(&mu_);
  auto none = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return steps_in_flight_ == 0; };
  return mu_.AwaitWithDeadline(absl::Condition(&none), deadline);
}

std::vector<Worker::RunningStep> Worker::RunningSteps() {
  std::vector<Running> running;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, r] : running_) running.push_back(r);
  }
  const absl::Time now = absl::Now();
  std::vector<RunningStep> steps;
  steps.reserve(running.size());
  for (const Running& r : running) {
    std::vector<std::string> keys = r.rendezvous->PendingReceives();
    if (keys.size() > kMaxWaitingKeys) keys.resize(kMaxWaitingKeys);
    steps.push_back(
        {r.step_id, r.graph_handle, absl::ToDoubleSeconds(now - r.started), std::move(keys)});
  }
  return steps;
}

}  // namespace distflow
