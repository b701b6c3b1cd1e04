// The master service's logic: creates sessions (discovering the devices of
// every task of the cluster, each with its incarnation), routes requests to
// them and closes them. Calls that block (closing sessions, building and
// registering client graphs) run on the master's own pool so transport
// threads never block; a step holds no thread at all while its workers run
// (the reply comes from the last worker's callback), and neither does a
// session being created while it waits for the tasks to answer.
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_MASTER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_MASTER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/threadpool.h"
#include "distflow/distributed_runtime/master_session.h"
#include "distflow/distributed_runtime/worker_cache.h"
#include "distflow/master.pb.h"

namespace distflow {

class Master {
 public:
  // `task_name` is the task this master runs in; its CPU:0 is the client
  // device of every session. `default_config` comes from the ServerDef.
  // `worker_cache` reaches the cluster the server was started with; a
  // session whose config carries a cluster_def uses a cache made by
  // `cache_factory` for that cluster instead and announces it to every
  // task with CreateWorkerSession.
  Master(std::string task_name, std::shared_ptr<WorkerCache> worker_cache,
         WorkerCacheFactory cache_factory, ConfigProto default_config);
  ~Master();

  using Done = std::function<void(const absl::Status&)>;

  // The calls to the tasks that set a session up wait at most the config's
  // operation_timeout_in_ms, and never more than kMaxSetupCallMs whatever
  // the client asks; cancelling `call_cm` (may be null: the caller went
  // away) cancels them.
  static constexpr int64_t kMaxSetupCallMs = 60 * 1000;
  void CreateSession(const CreateSessionRequest* req, CreateSessionResponse* resp,
                     CancellationManager* call_cm, Done done);
  void ExtendSession(const ExtendSessionRequest* req, ExtendSessionResponse* resp, Done done);
  // `call_cm` (may be null) is cancelled when the caller gives up; the
  // step is then cancelled.
  void RunStep(const RunStepRequest* req, RunStepResponse* resp, CancellationManager* call_cm,
               Done done);
  void CloseSession(const CloseSessionRequest* req, CloseSessionResponse* resp, Done done);
  void ListDevices(const ListDevicesRequest* req, ListDevicesResponse* resp, Done done);
  void Reset(const ResetRequest* req, ResetResponse* resp, Done done);
  void MakeCallable(const MakeCallableRequest* req, MakeCallableResponse* resp, Done done);
  void RunCallable(const RunCallableRequest* req, RunCallableResponse* resp,
                   CancellationManager* call_cm, Done done);
  void ReleaseCallable(const ReleaseCallableRequest* req, ReleaseCallableResponse* resp, Done done);
  void PartialRunSetup(const PartialRunSetupRequest* req, PartialRunSetupResponse* resp, Done done);

  // Sessions open on this master.
  int64_t num_sessions();

 private:
  struct SessionSetup;
  // Asks every task for its devices; Unavailable naming a task that does
  // not answer within the timeout.
  absl::StatusOr<std::unique_ptr<DeviceSet>> DiscoverDevices(WorkerCache* cache,
                                                             int64_t timeout_ms);
  // The devices the tasks' GetStatus replies list, or Unavailable naming a
  // task whose call failed.
  absl::StatusOr<std::unique_ptr<DeviceSet>> DevicesFromReplies(
      const std::vector<std::string>& tasks, const std::vector<absl::Status>& statuses,
      const std::vector<GetStatusResponse>& resps);
  // The CreateWorkerSession request that tells `task` of `cache`'s cluster
  // about session `handle`.
  CreateWorkerSessionRequest WorkerSessionRequest(const WorkerCache& cache, const std::string& task,
                                                  const std::string& handle) const;
  // The phases of CreateSession after the tasks' devices are known: tell
  // every task about the session, then build it on the pool.
  void CreateWorkerSessionsForSetup(std::shared_ptr<SessionSetup> setup);
  void FinishSetup(std::shared_ptr<SessionSetup> setup, absl::Status status);
  absl::StatusOr<std::shared_ptr<MasterSession>> FindSession(const std::string& handle);
  // Runs `call(session)`, which blocks, on the pool, and `done` with its
  // status.
  void CallOnPool(const std::string& handle, Done done,
                  std::function<absl::Status(MasterSession&)> call);

  const std::string task_name_;
  const std::shared_ptr<WorkerCache> worker_cache_;
  const WorkerCacheFactory cache_factory_;
  const ConfigProto default_config_;
  ThreadPool pool_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<MasterSession>> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_MASTER_H_
