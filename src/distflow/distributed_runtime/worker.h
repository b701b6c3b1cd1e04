// The worker service's logic, independent of the transport: register and
// run graph partitions, serve tensors to peers, drop a step's state when the
// master says so. RunGraph and RecvTensor complete asynchronously (no thread
// waits for a tensor). Transports call it: the gRPC service
// (rpc/grpc_worker_service.h) and LocalWorker (local_worker.h).
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/core/refcount.h"
#include "distflow/distributed_runtime/graph_mgr.h"
#include "distflow/distributed_runtime/rendezvous_mgr.h"
#include "distflow/distributed_runtime/worker_cache.h"
#include "distflow/distributed_runtime/worker_env.h"
#include "distflow/framework/cancellation.h"
#include "distflow/worker.pb.h"

namespace distflow {

class Worker {
 public:
  explicit Worker(WorkerEnv* env);
  ~Worker();

  using Done = std::function<void(const absl::Status&)>;

  void GetStatus(const GetStatusRequest& req, GetStatusResponse* resp);
  absl::Status CreateWorkerSession(const CreateWorkerSessionRequest& req);
  absl::Status DeleteWorkerSession(const DeleteWorkerSessionRequest& req);
  absl::Status RegisterGraph(const RegisterGraphRequest& req, RegisterGraphResponse* resp);
  absl::Status DeregisterGraph(const DeregisterGraphRequest& req);
  // Drops the rendezvous (and with it any buffered tensors and waiters) of
  // a finished or failed step.
  absl::Status CleanupGraph(const CleanupGraphRequest& req);
  absl::Status CleanupAll(const CleanupAllRequest& req);
  // Graphs registered on this worker.
  int64_t num_graphs() { return graph_mgr_.num_graphs(); }

  // A RunGraph step running now, for the server's status page.
  struct RunningStep {
    int64_t step_id;
    std::string graph_handle;
    double age_seconds;
    // The Recv keys its consumers wait for (at most kMaxWaitingKeys).
    std::vector<std::string> waiting_for;
  };
  static constexpr size_t kMaxWaitingKeys = 16;
  // Oldest first.
  std::vector<RunningStep> RunningSteps();

  // Cancels every RunGraph step running and waits, until `deadline`, for
  // the last one's completion (its caller's callback included) to return;
  // false when one is still running then. The transport calls it as it
  // shuts down, before this worker is destroyed: a step whose call was cut
  // may still be ending on another thread.
  bool CancelStepsAndWait(absl::Time deadline);

  // Runs one step of a registered graph: puts req.send into the step's
  // rendezvous, runs, and returns the tensors of req.recv_key. `call_cm` is
  // cancelled when the caller goes away (the step then stops).
  void RunGraphAsync(CancellationManager* call_cm, const RunGraphRequest* req,
                     RunGraphResponse* resp, Done done);

  // Waits for the local producer of req.rendezvous_key in step req.step_id
  // and hands the tensor itself (no copy) to `done`; a transport encodes it.
  // Cancelling `call_cm` (the caller's deadline passed or it went away; may
  // be null) ends the wait with Cancelled and drops a step that only this
  // wait was holding (see RendezvousMgr).
  using RecvTensorDone =
      std::function<void(const absl::Status&, const Tensor& value, bool is_dead)>;
  void RecvTensorAsync(CancellationManager* call_cm, const RecvTensorRequest& req,
                       RecvTensorDone done);

 private:
  // The peers a session's steps talk to: the session's own cluster when
  // CreateWorkerSession gave one, else the server's.
  std::shared_ptr<WorkerCache> CacheForSession(const std::string& session);
  // One call of a partial run: the first call of a step starts its
  // executors; each call adds feeds and waits only for its own fetches; the
  // last call also waits for the step to finish.
  void RunPartialGraphAsync(CancellationManager* call_cm, const RunGraphRequest* req,
                            RunGraphResponse* resp, Done done);
  struct PartialStep;

  WorkerEnv* const env_;
  GraphMgr graph_mgr_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<WorkerCache>> session_caches_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int64_t, std::shared_ptr<PartialStep>> partial_steps_ ABSL_GUARDED_BY(mu_);
  // RunGraph steps running, by a number of their own (in start order).
  struct Running {
    int64_t step_id;
    std::string graph_handle;
    absl::Time started;
    RefPtr<RemoteRendezvous> rendezvous;
    // Cancels the step while it lives.
    std::function<void()> cancel;
  };
  uint64_t next_running_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, Running> running_ ABSL_GUARDED_BY(mu_);
  // RunGraph steps started and whose completion has not yet returned.
  int steps_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_H_
