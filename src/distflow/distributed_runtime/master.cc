#include "distflow/distributed_runtime/master.h"

#include "absl/strings/str_cat.h"
#include "distflow/core/random.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/call_util.h"
#include "distflow/distributed_runtime/cluster_spec.h"

namespace distflow {

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

absl::Status Master::CreateWorkerSessions(WorkerCache* cache, const std::string& handle,
                                          int64_t timeout_ms) {
  const std::vector<std::string> tasks = cache->ListWorkers();
  std::vector<CreateWorkerSessionRequest> reqs(tasks.size());
  std::vector<CreateWorkerSessionResponse> resps(tasks.size());
  std::vector<CallOptions> opts(tasks.size());
  const std::vector<absl::Status> statuses =
      CallAllAndWait(tasks.size(), [&](size_t i, StatusCallback done) {
        absl::StatusOr<WorkerInterface*> worker = cache->GetWorker(tasks[i]);
        if (!worker.ok()) return done(worker.status());
        ParsedDeviceName p;
        device_name::Parse(tasks[i], &p);
        reqs[i].set_session_handle(handle);
        if (cache != worker_cache_.get()) {
          *reqs[i].mutable_server_def()->mutable_cluster() = cache->cluster().def();
          reqs[i].mutable_server_def()->set_job_name(p.job);
          reqs[i].mutable_server_def()->set_task_index(p.task);
        }
        reqs[i].set_master_task(task_name_);
        opts[i].set_timeout_ms(timeout_ms);
        (*worker)->CreateWorkerSessionAsync(&reqs[i], &resps[i], &opts[i], std::move(done));
      });
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!statuses[i].ok()) {
      return errors::Unavailable("cannot create a session on task ", tasks[i], ": ",
                                 statuses[i].message());
    }
  }
  return absl::OkStatus();
}

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
                           Done done) {
  pool_.Schedule([this, req, resp, done = std::move(done)] {
    ConfigProto config = default_config_;
    config.MergeFrom(req->config());
    const int64_t timeout =
        config.operation_timeout_in_ms() > 0 ? config.operation_timeout_in_ms() : 10000;
    std::shared_ptr<WorkerCache> cache = worker_cache_;
    if (config.cluster_def().job_size() > 0) {
      absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromClusterDef(config.cluster_def());
      if (!cluster.ok()) {
        done(cluster.status());
        return;
      }
      cache = cache_factory_(std::move(*cluster));
    }
    absl::StatusOr<std::unique_ptr<DeviceSet>> devices = DiscoverDevices(cache.get(), timeout);
    if (!devices.ok()) {
      done(devices.status());
      return;
    }
    const std::string handle = absl::StrCat("session_", absl::Hex(random::New64()));
    absl::Status created = CreateWorkerSessions(cache.get(), handle, timeout);
    if (!created.ok()) {
      done(created);
      return;
    }
    auto session =
        std::make_shared<MasterSession>(handle, config, std::move(*devices), cache, &pool_);
    absl::Status s = session->Create(req->graph_def());
    if (!s.ok()) {
      done(s);
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      sessions_[handle] = session;
    }
    resp->set_session_handle(handle);
    resp->set_graph_version(0);
    done(absl::OkStatus());
  });
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
        DiscoverDevices(worker_cache_.get(), 10000);
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
      opts->set_timeout_ms(5000);
      (*worker)->CleanupAllAsync(creq, cresp, opts, [creq, cresp, opts](const absl::Status&) {
        delete creq;
        delete cresp;
        delete opts;
      });
    }
    done(absl::OkStatus());
  });
}

}  // namespace distflow
