// Clients for the workers of a cluster, one per task, created on first use
// and kept for the life of the cache. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_CACHE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_CACHE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_worker_client.h"

namespace distflow {

class WorkerCache {
 public:
  explicit WorkerCache(ClusterSpec cluster);

  // The client for a task ("/job:J/replica:0/task:T" or any device name in
  // it). NotFound naming the task when the cluster has no such task.
  absl::StatusOr<GrpcWorkerClient*> GetWorker(absl::string_view task_or_device);
  // Every task of the cluster, sorted.
  std::vector<std::string> ListWorkers() const { return cluster_.TaskNames(); }
  const ClusterSpec& cluster() const { return cluster_; }

 private:
  const ClusterSpec cluster_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<GrpcWorkerClient>> workers_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_CACHE_H_
