// WorkerCache: the WorkerInterface of every task of a cluster, one per task,
// made on first use by the cache's factory (the gRPC client for a remote
// task, a LocalWorker for the task of this process) and kept for the life
// of the cache. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_CACHE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_CACHE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/worker_interface.h"

namespace distflow {

class WorkerCache {
 public:
  // Makes the interface of `task` ("/job:J/replica:0/task:T") at `address`.
  using WorkerFactory = std::function<absl::StatusOr<std::unique_ptr<WorkerInterface>>(
      const std::string& task, const std::string& address)>;

  WorkerCache(ClusterSpec cluster, WorkerFactory factory);

  // The worker of a task ("/job:J/replica:0/task:T" or any device name in
  // it). NotFound naming the task when the cluster has no such task.
  absl::StatusOr<WorkerInterface*> GetWorker(absl::string_view task_or_device);
  // Every task of the cluster, sorted.
  std::vector<std::string> ListWorkers() const;
  ClusterSpec cluster() const;
  // Points a task at a new address (see ClusterSpec::SetTaskAddress); the
  // task's worker is made anew on next use.
  absl::Status SetTaskAddress(absl::string_view job, int task, const std::string& address);

 private:
  const WorkerFactory factory_;
  mutable absl::Mutex mu_;
  ClusterSpec cluster_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::unique_ptr<WorkerInterface>> workers_ ABSL_GUARDED_BY(mu_);
};

// Makes the worker cache of a cluster: what a server gives its master and
// its worker for the clusters sessions bring.
using WorkerCacheFactory = std::function<std::shared_ptr<WorkerCache>(ClusterSpec cluster)>;

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_CACHE_H_
