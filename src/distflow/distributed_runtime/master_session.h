// One client session on the master (seed 000's run path). It keeps the full
// graph; for each run signature (feeds, fetches, targets) it builds a client
// graph once — rewrite feeds/fetches, place on the cluster's devices,
// partition by task with the shared partitioner — and registers each
// partition with its worker. Every step then gets a fresh step id and one
// RunGraph per worker, issued concurrently; the first failure cancels the
// others, every worker is told to drop the step's state afterwards, and
// fetches are returned in the order asked for.
// Thread-safe: many steps may run at once.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_MASTER_SESSION_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_MASTER_SESSION_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/device_set.h"
#include "distflow/common_runtime/placer.h"
#include "distflow/config.pb.h"
#include "distflow/distributed_runtime/worker_cache.h"
#include "distflow/graph.pb.h"
#include "distflow/master.pb.h"

namespace distflow {

class MasterSession {
 public:
  // `devices` are every device of the cluster, with the master's own
  // task's CPU as the client device.
  MasterSession(std::string handle, ConfigProto config, std::unique_ptr<DeviceSet> devices,
                std::shared_ptr<WorkerCache> worker_cache);
  ~MasterSession();

  const std::string& handle() const { return handle_; }
  const DeviceSet& devices() const { return *devices_; }

  // Checks the graph imports (unknown ops, bad inputs, ... are
  // InvalidArgument/Unimplemented naming the node) and keeps it.
  absl::Status Create(const GraphDef& graph_def);
  // Adds nodes. FailedPrecondition when current_graph_version is stale.
  absl::Status Extend(const ExtendSessionRequest& req, ExtendSessionResponse* resp);

  absl::Status Run(const RunStepRequest& req, RunStepResponse* resp);

  absl::Status MakeCallable(const MakeCallableRequest& req, MakeCallableResponse* resp);
  absl::Status RunCallable(const RunCallableRequest& req, RunCallableResponse* resp);
  absl::Status ReleaseCallable(const ReleaseCallableRequest& req);

  absl::Status PartialRunSetup(const PartialRunSetupRequest& req,
                               PartialRunSetupResponse* resp);

  // Deregisters every partition from its worker. Later calls fail.
  absl::Status Close();

 private:
  struct Signature {
    std::vector<std::string> feeds, fetches, targets;
  };
  struct ClientGraph;
  struct Callable {
    Signature sig;
    RunOptions run_options;
  };
  struct PartialRunState;

  absl::StatusOr<std::shared_ptr<ClientGraph>> GetOrBuildClientGraph(const Signature& sig);
  absl::StatusOr<std::shared_ptr<ClientGraph>> BuildClientGraph(const Signature& sig);
  // Runs one step of `cg` (or one call of a partial run). `feeds[i]` (when
  // not null) goes to sig.feeds[i]; `fetched[k]` receives
  // sig.fetches[fetch_indices[k]].
  absl::Status RunClientGraph(const ClientGraph& cg, int64_t step_id,
                              const RunOptions& options,
                              const std::vector<const TensorProto*>& feeds,
                              const std::vector<int>& fetch_indices,
                              std::vector<TensorProto>* fetched, RunMetadata* metadata,
                              bool is_partial, bool is_last_partial);
  absl::Status PartialRun(const RunStepRequest& req, RunStepResponse* resp);
  // Turns a worker's failure into the step's error: names the task, and
  // reports a restarted task (new incarnation) as Aborted.
  absl::Status WorkerError(const std::string& task, const absl::Status& s);
  void DeregisterAll();

  const std::string handle_;
  const ConfigProto config_;
  const std::unique_ptr<DeviceSet> devices_;
  const std::shared_ptr<WorkerCache> worker_cache_;

  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  GraphDef graph_def_ ABSL_GUARDED_BY(mu_);
  int64_t graph_version_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::shared_ptr<ClientGraph>> client_graphs_ ABSL_GUARDED_BY(mu_);
  StatefulPlacements stateful_placements_ ABSL_GUARDED_BY(mu_);
  int64_t next_callable_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<int64_t, Callable> callables_ ABSL_GUARDED_BY(mu_);
  int64_t name_counter_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_partial_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<PartialRunState>> partial_runs_
      ABSL_GUARDED_BY(mu_);
  // Serializes building client graphs, so one signature is built once.
  absl::Mutex build_mu_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_MASTER_SESSION_H_
