// The graphs registered with one worker. RegisterGraph hands over the
// partition of a client graph that the master placed on this worker's task;
// the GraphMgr partitions it again by local device (PartitionGraph, the
// pipeline's partitioner), builds an ExecutorSet and returns a handle.
// ExecuteAsync runs the set for one step with the step's rendezvous.
// Stateful kernels are shared by the pipeline's one rule (SessionKernels,
// one per master session), so their state (e.g. a random op's stream)
// survives across run signatures. Thread-safe; a graph deregistered while a
// step runs stays alive until that step ends.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_GRAPH_MGR_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_GRAPH_MGR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/executor_set.h"
#include "distflow/common_runtime/session_kernels.h"
#include "distflow/config.pb.h"
#include "distflow/distributed_runtime/worker_env.h"
#include "distflow/graph.pb.h"

namespace distflow {

class StepStatsCollector;

class GraphMgr {
 public:
  explicit GraphMgr(const WorkerEnv* env);
  ~GraphMgr();

  // InvalidArgument naming the node for a graph that does not import, a
  // device not on this worker, or a kernel that cannot be built.
  absl::Status Register(const std::string& session, const GraphDef& graph_def,
                        const GraphOptions& graph_options, std::string* handle);
  // NotFound for an unknown handle.
  absl::Status Deregister(const std::string& handle);
  // Graphs registered and not yet deregistered.
  int64_t num_graphs();
  // Drops every graph of `session` and its shared kernels.
  void DeregisterSession(const std::string& session);
  void DeregisterAll();

  // Runs the graph for one step. `rendezvous` already holds the step's
  // client sends; `done` runs once with the step's first error.
  void ExecuteAsync(const std::string& handle, int64_t step_id, Rendezvous* rendezvous,
                    CancellationManager* cancellation_manager, StepStatsCollector* collector,
                    std::function<void(absl::Status)> done);

  // The partition graphs (by local device) of a handle, for RunMetadata.
  absl::Status PartitionGraphs(const std::string& handle, std::vector<GraphDef>* out);

 private:
  struct Item {
    std::string session;
    std::unique_ptr<ExecutorSet> executors;
  };

  // The kernels shared by `session`'s graphs, made on first use.
  std::shared_ptr<SessionKernels> KernelsOf(const std::string& session);

  const WorkerEnv* const env_;
  std::atomic<int64_t> name_counter_{0};
  absl::Mutex mu_;
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<Item>> table_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<SessionKernels>> kernels_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_GRAPH_MGR_H_
