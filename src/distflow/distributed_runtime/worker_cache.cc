#include "distflow/distributed_runtime/worker_cache.h"

#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "distflow/framework/device_name_utils.h"

namespace distflow {

WorkerCache::WorkerCache(ClusterSpec cluster) : cluster_(std::move(cluster)) {}

absl::StatusOr<GrpcWorkerClient*> WorkerCache::GetWorker(absl::string_view task_or_device) {
  ParsedDeviceName parsed;
  if (!device_name::Parse(task_or_device, &parsed) || !parsed.has_job || !parsed.has_task) {
    return errors::InvalidArgument("'", task_or_device, "' does not name a task (/job:J/task:T)");
  }
  parsed.has_replica = true;
  parsed.replica = 0;
  const std::string task = device_name::TaskName(parsed);
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(task);
  if (it != workers_.end()) return it->second.get();
  DF_ASSIGN_OR_RETURN(std::string address, cluster_.TaskAddress(parsed.job, parsed.task));
  auto client = std::make_unique<GrpcWorkerClient>(task, NewGrpcChannel(address));
  GrpcWorkerClient* raw = client.get();
  workers_[task] = std::move(client);
  return raw;
}

}  // namespace distflow
