// One client session on the master: how a client's Run reaches the workers. It
// keeps the full graph in a GraphExecutionState; for each run signature it
// builds a client graph once — the pipeline's rewrite, placement and partition
// by task — and registers each part with the worker of its task. Every step
// then gets a fresh step id and one RunGraph per worker, issued together; the
// first failure cancels the others, every worker is told to drop the step's
// state afterwards, and fetches come back in the order asked for.
//
// Steps run without holding a thread: a step whose client graph is built
// starts on the caller's thread and finishes from the last worker's reply.
// Building a client graph (and registering it) blocks, so it runs on the
// pool the caller names. Thread-safe: many steps may run at once. Owned by
// shared_ptr (steps in flight keep their session alive).
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_MASTER_SESSION_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_MASTER_SESSION_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/device_set.h"
#include "distflow/common_runtime/graph_execution_state.h"
#include "distflow/config.pb.h"
#include "distflow/core/threadpool.h"
#include "distflow/distributed_runtime/deferred_cleanups.h"
#include "distflow/distributed_runtime/worker_cache.h"
#include "distflow/framework/cancellation.h"
#include "distflow/graph.pb.h"
#include "distflow/master.pb.h"

namespace distflow {

class MasterSession : public std::enable_shared_from_this<MasterSession> {
 public:
  using Done = std::function<void(const absl::Status&)>;

  // `devices` are every device of the cluster, with the master's own
  // task's CPU as the client device. Blocking work goes to `pool`
  // (borrowed; it must outlive the session).
  MasterSession(std::string handle, ConfigProto config, std::unique_ptr<DeviceSet> devices,
                std::shared_ptr<WorkerCache> worker_cache, ThreadPool* pool);
  ~MasterSession();

  const std::string& handle() const { return handle_; }

  // Checks the graph imports (unknown ops, bad inputs, ... are
  // InvalidArgument/Unimplemented naming the node) and keeps it.
  absl::Status Create(const GraphDef& graph_def);
  // Adds nodes. FailedPrecondition when current_graph_version is stale.
  absl::Status Extend(const ExtendSessionRequest& req, ExtendSessionResponse* resp);

  // Asynchronous: `req` and `resp` must stay valid until `done` runs.
  // `call_cm` (may be null) cancels the step when the caller gives up.
  void RunAsync(const RunStepRequest* req, RunStepResponse* resp, CancellationManager* call_cm,
                Done done);
  void RunCallableAsync(const RunCallableRequest* req, RunCallableResponse* resp,
                        CancellationManager* call_cm, Done done);

  // These build client graphs, so they block: call them on a pool thread.
  absl::Status MakeCallable(const MakeCallableRequest& req, MakeCallableResponse* resp);
  absl::Status ReleaseCallable(const ReleaseCallableRequest& req);
  absl::Status PartialRunSetup(const PartialRunSetupRequest& req, PartialRunSetupResponse* resp);

  // Deregisters every partition from its worker. Later calls fail.
  absl::Status Close();

 private:
  struct RegisteredGraph;
  struct Callable {
    RunSignature sig;
    RunSignatureIndex index;
    std::vector<std::string> feed_names;  // as given to MakeCallable
    RunOptions run_options;
  };
  struct PartialRunState;
  struct StepCall;
  // What one RunStepAsync is: a whole step, or one call of a partial run
  // (the last one ends the step on the workers).
  enum class StepKind { kWhole, kPartialCall, kLastPartialCall };
  // The fetched tensors of a step, parallel to the fetch indices it was
  // given, or its error.
  using StepDone = std::function<void(absl::Status, std::vector<TensorProto> fetched)>;

  absl::StatusOr<std::shared_ptr<const RegisteredGraph>> FindRegistered(const RunSignature& sig);
  // Blocks: builds and registers on first use.
  absl::StatusOr<std::shared_ptr<const RegisteredGraph>> GetOrBuild(const RunSignature& sig);
  absl::StatusOr<std::shared_ptr<const RegisteredGraph>> Build(const RunSignature& sig);
  // Runs `then(graph)` with the registered graph of `sig`: at once when it
  // is built, else on the pool after building it.
  void WithRegistered(
      const RunSignature& sig,
      std::function<void(absl::StatusOr<std::shared_ptr<const RegisteredGraph>>)> then);
  // Runs one step of `rg` (or one call of a partial run). `feeds[i]` (when
  // not null) goes to the signature's feeds[i] and is checked against it
  // (`feed_names[i]` names it in errors); the fetched tensors are the
  // signature's fetches[fetch_indices[k]]. The step's stats and partition
  // graphs go to `metadata`. All pointers must stay valid until `done`.
  void RunStepAsync(std::shared_ptr<const RegisteredGraph> rg, int64_t step_id,
                    const RunOptions& options, std::vector<const TensorProto*> feeds,
                    std::vector<std::string> feed_names, std::vector<int> fetch_indices,
                    RunMetadata* metadata, StepKind kind, CancellationManager* call_cm,
                    StepDone done);
  void FinishStep(const std::shared_ptr<StepCall>& call);
  void PartialRunAsync(const RunStepRequest* req, RunStepResponse* resp,
                       CancellationManager* call_cm, Done done);
  // Turns a worker's failure into the step's error: names the task, and
  // reports a restarted task (new incarnation) as Aborted.
  void WorkerErrorAsync(const std::string& task, const absl::Status& s,
                        std::function<void(absl::Status)> done);
  void DeregisterAll();

  const std::string handle_;
  const ConfigProto config_;
  const std::unique_ptr<DeviceSet> devices_;
  const std::shared_ptr<WorkerCache> worker_cache_;
  ThreadPool* const pool_;
  GraphExecutionState execution_state_;

  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int64_t graph_version_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::shared_ptr<const RegisteredGraph>> registered_ ABSL_GUARDED_BY(mu_);
  int64_t next_callable_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<int64_t, Callable> callables_ ABSL_GUARDED_BY(mu_);
  int64_t next_partial_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<PartialRunState>> partial_runs_
      ABSL_GUARDED_BY(mu_);
  // Serializes building client graphs, so one signature is built once.
  absl::Mutex build_mu_;
  // Finished steps' CleanupGraph calls, sent with the next RunGraph.
  DeferredCleanups cleanups_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_MASTER_SESSION_H_
