#include "distflow/distributed_runtime/worker_cache.h"

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/device_name_utils.h"

namespace distflow {

WorkerCache::WorkerCache(ClusterSpec cluster, WorkerFactory factory)
    : factory_(std::move(factory)), cluster_(std::move(cluster)) {}

std::vector<std::string> WorkerCache::ListWorkers() const {
  absl::MutexLock lock(&mu_);
  return cluster_.TaskNames();
}

ClusterSpec WorkerCache::cluster() const {
  absl::MutexLock lock(&mu_);
  return cluster_;
}

absl::Status WorkerCache::SetTaskAddress(absl::string_view job, int task,
                                         const std::string& address) {
  absl::MutexLock lock(&mu_);
  DF_RETURN_IF_ERROR(cluster_.SetTaskAddress(job, task, address));
  workers_.erase(absl::StrCat("/job:", job, "/replica:0/task:", task));
  return absl::OkStatus();
}

absl::StatusOr<WorkerInterface*> WorkerCache::GetWorker(absl::string_view task_or_device) {
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
  DF_ASSIGN_OR_RETURN(std::unique_ptr<WorkerInterface> client, factory_(task, address));
  WorkerInterface* raw = client.get();
  workers_[task] = std::move(client);
  return raw;
}

}  // namespace distflow
