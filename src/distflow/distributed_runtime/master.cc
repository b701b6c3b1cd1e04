#include "distflow/distributed_runtime/master.h"

#include "absl/strings/str_cat.h"
#include "distflow/core/random.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/call_util.h"
#include "distflow/distributed_runtime/cluster_spec.h"

namespace distflow {
namespace {

// Each call that sets a session up (GetStatus and CreateWorkerSession to
// every task) when the session's config sets no operation_timeout_in_ms; a
// config that does is capped at Master::kMaxSetupCallMs.
constexpr int64_t kSessionSetupCallDefaultMs = 10000;
// ListDevices: the GetStatus calls that collect every task's devices.
constexpr int64_t kListDevicesCallMs = 10000;
// Reset: the CleanupAll call sent to each worker.
constexpr int64_t kResetCleanupCallMs = 5000;

}  // namespace

Master::Master(std::string task_name, std::shared_ptr<WorkerCache> worker_cache,
               WorkerCacheFactory cache_factory, ConfigProto default_config)
    : task_name_(std::move(task_name)),
      worker_cache_(std::move(worker_cache)),
      cache_factory_(std::move(cache_factory)),
      default_config_(std::move(default_config)),
      pool_("master", 16) {}

Master::~Master() {
  absl::flat_hash_map<std::string, std::shared_ptr<MasterSession>> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  for (auto& [h, s] : sessions) s->Close().IgnoreError();
}

absl::StatusOr<std::unique_ptr<DeviceSet>> Master::DiscoverDevices(WorkerCache* cache,
                                                                   int64_t timeout_ms) {
  const std::vector<std::string> tasks = cache->ListWorkers();
  std::vector<GetStatusRequest> reqs(tasks.size());
  std::vector<GetStatusResponse> resps(tasks.size());
  std::vector<CallOptions> opts(tasks.size());
  const std::vector<absl::Status> statuses =
      CallAllAndWait(tasks.size(), [&](size_t i, StatusCallback done) {
        absl::StatusOr<WorkerInterface*> worker = cache->GetWorker(tasks[i]);
        if (!worker.ok()) return done(worker.status());
        opts[i].set_timeout_ms(timeout_ms);
        (*worker)->GetStatusAsync(&reqs[i], &resps[i], &opts[i], std::move(done));
      });
  return DevicesFromReplies(tasks, statuses, resps);
}

absl::StatusOr<std::unique_ptr<DeviceSet>> Master::DevicesFromReplies(
    const std::vector<std::string>& tasks, const std::vector<absl::Status>& statuses,
    const std::vector<GetStatusResponse>& resps) {
  auto devices = std::make_unique<DeviceSet>();
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!statuses[i].ok()) {
      return errors::Unavailable("cannot reach task ", tasks[i],
                                 " to list its devices: ", statuses[i].message());
    }
    for (const DeviceAttributes& d : resps[i].device_attributes()) {
      DF_RETURN_IF_ERROR(devices->AddDevice(d));
    }
  }
  DF_RETURN_IF_ERROR(devices->SetClientDevice(absl::StrCat(task_name_, "/device:CPU:0")));
  return devices;
}

CreateWorkerSessionRequest Master::WorkerSessionRequest(const WorkerCache& cache,
                                                        const std::string& task,
                                                        const std::string& handle) const {
  CreateWorkerSessionRequest req;
  ParsedDeviceName p;
  device_name::Parse(task, &p);
  req.set_session_handle(handle);
  if (&cache != worker_cache_.get()) {
    *req.mutable_server_def()->mutable_cluster() = cache.cluster().def();
    req.mutable_server_def()->set_job_name(p.job);
    req.mutable_server_def()->set_task_index(p.task);
  }
  req.set_master_task(task_name_);
  return req;
}

// One CreateSession between its request and its reply. The calls to the
// tasks report to callbacks that start the next phase, so no thread waits
// for a task; `opts` holds one CallOptions per task and phase, all
// cancelled when the caller goes away.
struct Master::SessionSetup {
  const CreateSessionRequest* req = nullptr;
  CreateSessionResponse* resp = nullptr;
  Done done;
  ConfigProto config;
  int64_t timeout_ms = 0;
  std::shared_ptr<WorkerCache> cache;
  std::vector<std::string> tasks;
  std::vector<GetStatusRequest> status_reqs;
  std::vector<GetStatusResponse> status_resps;
  std::vector<CreateWorkerSessionRequest> session_reqs;
  std::vector<CreateWorkerSessionResponse> session_resps;
  std::unique_ptr<CallOptions[]> opts;  // 2 * tasks.size()
  std::unique_ptr<DeviceSet> devices;
  std::string handle;
  CancellationManager* call_cm = nullptr;
  CancellationToken token = 0;
};

absl::StatusOr<std::shared_ptr<MasterSession>> Master::FindSession(const std::string& handle) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) {
    return errors::Aborted("session '", handle,
                           "' is not found on this master (it was closed, or the master "
                           "restarted)");
  }
  return it->second;
}

void Master::CreateSession(const CreateSessionRequest* req, CreateSessionResponse* resp,
                           CancellationManager* call_cm, Done done) {
  auto setup = std::make_shared<SessionSetup>();
  setup->req = req;
  setup->resp = resp;
  setup->done = std::move(done);
  setup->config = default_config_;
  setup->config.MergeFrom(req->config());
  const int64_t asked = setup->config.operation_timeout_in_ms();
  setup->timeout_ms = asked > 0 ? std::min(asked, kMaxSetupCallMs) : kSessionSetupCallDefaultMs;
  setup->cache = worker_cache_;
  if (setup->config.cluster_def().job_size() > 0) {
    absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromClusterDef(setup->config.cluster_def());
    if (!cluster.ok()) {
      setup->done(cluster.status());
      return;
    }
    setup->cache = cache_factory_(std::move(*cluster));
  }
  setup->tasks = setup->cache->ListWorkers();
  const size_t n = setup->tasks.size();
  setup->status_reqs.resize(n);
  setup->status_resps.resize(n);
  setup->opts = std::make_unique<CallOptions[]>(2 * n);
  for (size_t i = 0; i < 2 * n; ++i) setup->opts[i].set_timeout_ms(setup->timeout_ms);
  if (call_cm != nullptr) {
    setup->call_cm = call_cm;
    setup->token = call_cm->get_cancellation_token();
    // The callback keeps the setup alive: it may run while the last reply
    // finishes the setup.
    if (!call_cm->RegisterCallback(setup->token, [setup] {
          for (size_t i = 0; i < 2 * setup->tasks.size(); ++i) setup->opts[i].StartCancel();
        })) {
      setup->call_cm = nullptr;
      setup->done(errors::Cancelled("CreateSession was cancelled by its caller"));
      return;
    }
  }
  CallAll(
      n,
      [&setup](size_t i, StatusCallback done) {
        absl::StatusOr<WorkerInterface*> worker = setup->cache->GetWorker(setup->tasks[i]);
        if (!worker.ok()) return done(worker.status());
        (*worker)->GetStatusAsync(&setup->status_reqs[i], &setup->status_resps[i], &setup->opts[i],
                                  std::move(done));
      },
      [this, setup](std::vector<absl::Status> statuses) {
        absl::StatusOr<std::unique_ptr<DeviceSet>> devices =
            DevicesFromReplies(setup->tasks, statuses, setup->status_resps);
        if (!devices.ok()) {
          FinishSetup(setup, devices.status());
          return;
        }
        setup->devices = *std::move(devices);
        CreateWorkerSessionsForSetup(setup);
      });
}

void Master::CreateWorkerSessionsForSetup(std::shared_ptr<SessionSetup> setup) {
  setup->handle = absl::StrCat("session_", absl::Hex(random::New64()));
  const size_t n = setup->tasks.size();
  setup->session_resps.resize(n);
  for (const std::string& task : setup->tasks) {
    setup->session_reqs.push_back(WorkerSessionRequest(*setup->cache, task, setup->handle));
  }
  CallAll(
      n,
      [&setup, n](size_t i, StatusCallback done) {
        absl::StatusOr<WorkerInterface*> worker = setup->cache->GetWorker(setup->tasks[i]);
        if (!worker.ok()) return done(worker.status());
        (*worker)->CreateWorkerSessionAsync(&setup->session_reqs[i], &setup->session_resps[i],
                                            &setup->opts[n + i], std::move(done));
      },
      [this, setup](std::vector<absl::Status> statuses) {
        for (size_t i = 0; i < statuses.size(); ++i) {
          if (!statuses[i].ok()) {
            FinishSetup(setup, errors::Unavailable("cannot create a session on task ",
                                                   setup->tasks[i], ": ", statuses[i].message()));
            return;
          }
        }
        // Building the session's graph may take a while: not on a
        // transport's thread.
        pool_.Schedule([this, setup] {
          auto session = std::make_shared<MasterSession>(
              setup->handle, setup->config, std::move(setup->devices), setup->cache, &pool_);
          absl::Status s = session->Create(setup->req->graph_def());
          if (s.ok()) {
            absl::MutexLock lock(&mu_);
            sessions_[setup->handle] = session;
          }
          FinishSetup(setup, s);
        });
      });
}

void Master::FinishSetup(std::shared_ptr<SessionSetup> setup, absl::Status status) {
  if (setup->call_cm != nullptr) setup->call_cm->DeregisterCallback(setup->token);
  if (status.ok()) {
    setup->resp->set_session_handle(setup->handle);
    setup->resp->set_graph_version(0);
  }
  setup->done(status);
}

void Master::CallOnPool(const std::string& handle, Done done,
                        std::function<absl::Status(MasterSession&)> call) {
  pool_.Schedule([this, handle, done = std::move(done), call = std::move(call)] {
    absl::StatusOr<std::shared_ptr<MasterSession>> session = FindSession(handle);
    done(session.ok() ? call(**session) : session.status());
  });
}

void Master::ExtendSession(const ExtendSessionRequest* req, ExtendSessionResponse* resp,
                           Done done) {
  CallOnPool(req->session_handle(), std::move(done),
             [req, resp](MasterSession& session) { return session.Extend(*req, resp); });
}

void Master::RunStep(const RunStepRequest* req, RunStepResponse* resp, CancellationManager* call_cm,
                     Done done) {
  absl::StatusOr<std::shared_ptr<MasterSession>> session = FindSession(req->session_handle());
  if (!session.ok()) {
    done(session.status());
    return;
  }
  (*session)->RunAsync(req, resp, call_cm, std::move(done));
}

void Master::MakeCallable(const MakeCallableRequest* req, MakeCallableResponse* resp, Done done) {
  CallOnPool(req->session_handle(), std::move(done),
             [req, resp](MasterSession& session) { return session.MakeCallable(*req, resp); });
}

void Master::RunCallable(const RunCallableRequest* req, RunCallableResponse* resp,
                         CancellationManager* call_cm, Done done) {
  absl::StatusOr<std::shared_ptr<MasterSession>> session = FindSession(req->session_handle());
  if (!session.ok()) {
    done(session.status());
    return;
  }
  (*session)->RunCallableAsync(req, resp, call_cm, std::move(done));
}

void Master::ReleaseCallable(const ReleaseCallableRequest* req, ReleaseCallableResponse* /*resp*/,
                             Done done) {
  absl::StatusOr<std::shared_ptr<MasterSession>> session = FindSession(req->session_handle());
  done(session.ok() ? (*session)->ReleaseCallable(*req) : session.status());
}

void Master::PartialRunSetup(const PartialRunSetupRequest* req, PartialRunSetupResponse* resp,
                             Done done) {
  CallOnPool(req->session_handle(), std::move(done),
             [req, resp](MasterSession& session) { return session.PartialRunSetup(*req, resp); });
}

void Master::CloseSession(const CloseSessionRequest* req, CloseSessionResponse* /*resp*/,
                          Done done) {
  pool_.Schedule([this, req, done = std::move(done)] {
    std::shared_ptr<MasterSession> session;
    {
      absl::MutexLock lock(&mu_);
      auto it = sessions_.find(req->session_handle());
      if (it != sessions_.end()) {
        session = it->second;
        sessions_.erase(it);
      }
    }
    if (session == nullptr) {
      done(errors::Aborted("session '", req->session_handle(), "' is not found on this master"));
      return;
    }
    done(session->Close());
  });
}

void Master::ListDevices(const ListDevicesRequest* req, ListDevicesResponse* resp, Done done) {
  pool_.Schedule([this, req, resp, done = std::move(done)] {
    absl::StatusOr<std::unique_ptr<DeviceSet>> devices =
        DiscoverDevices(worker_cache_.get(), kListDevicesCallMs);
    if (!devices.ok()) {
      done(devices.status());
      return;
    }
    for (const DeviceAttributes* d : (*devices)->devices()) {
      ParsedDeviceName p = (*devices)->parsed_name(d);
      if (device_name::TaskName(p) == task_name_) {
        *resp->add_local_device() = *d;
      } else {
        *resp->add_remote_device() = *d;
      }
    }
    done(absl::OkStatus());
  });
}

void Master::Reset(const ResetRequest* /*req*/, ResetResponse* /*resp*/, Done done) {
  pool_.Schedule([this, done = std::move(done)] {
    absl::flat_hash_map<std::string, std::shared_ptr<MasterSession>> sessions;
    {
      absl::MutexLock lock(&mu_);
      sessions.swap(sessions_);
    }
    for (auto& [h, s] : sessions) s->Close().IgnoreError();
    for (const std::string& task : worker_cache_->ListWorkers()) {
      absl::StatusOr<WorkerInterface*> worker = worker_cache_->GetWorker(task);
      if (!worker.ok()) continue;
      auto* creq = new CleanupAllRequest;
      auto* cresp = new CleanupAllResponse;
      auto* opts = new CallOptions;
      opts->set_timeout_ms(kResetCleanupCallMs);
      (*worker)->CleanupAllAsync(creq, cresp, opts, [creq, cresp, opts](const absl::Status&) {
        delete creq;
        delete cresp;
        delete opts;
      });
    }
    done(absl::OkStatus());
  });
}

int64_t Master::num_sessions() {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(sessions_.size());
}

}  // namespace distflow
