#include "rpc_env.h"

#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "distflow/common_runtime/cpu_device.h"
#include "distflow/common_runtime/device_mgr.h"
#include "distflow/core/threadpool.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/local_worker.h"
#include "distflow/distributed_runtime/rendezvous_mgr.h"
#include "fuzz_limits.h"

namespace distflow {
namespace fuzz {

InProcessTask& InProcessTask::Get() {
  static InProcessTask* task = new InProcessTask;
  return *task;
}

InProcessTask::InProcessTask() {
  SetFuzzLimits();
  const std::string task = "/job:localhost/replica:0/task:0";
  ConfigProto config;
  config.set_operation_timeout_in_ms(kStepTimeoutMs);
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> devices = CreateCpuDevices(config, task);
  absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromFlag("localhost=127.0.0.1:1");
  if (!devices.ok() || !cluster.ok()) std::abort();
  device_mgr_ = std::make_unique<DeviceMgr>(*std::move(devices));
  rendezvous_mgr_ = std::make_unique<RendezvousMgr>(task);
  compute_pool_ = std::make_unique<ThreadPool>("compute", 2);
  WorkerCacheFactory cache_factory = [this](ClusterSpec spec) {
    return std::make_shared<WorkerCache>(
        std::move(spec),
        [this](const std::string& name,
               const std::string&) -> absl::StatusOr<std::unique_ptr<WorkerInterface>> {
          return std::make_unique<LocalWorker>(name, worker_.get());
        });
  };
  env_.task_name = task;
  env_.device_mgr = device_mgr_.get();
  env_.worker_cache = cache_factory(*std::move(cluster));
  env_.worker_cache_factory = cache_factory;
  env_.rendezvous_mgr = rendezvous_mgr_.get();
  env_.compute_pool = compute_pool_.get();
  worker_ = std::make_unique<Worker>(&env_);
  master_ = std::make_unique<Master>(task, env_.worker_cache, cache_factory, config);
}

std::vector<Record> SplitRecords(const uint8_t* data, size_t size, size_t max_records) {
  std::vector<Record> out;
  size_t at = 0;
  while (at < size && out.size() < max_records) {
    const uint8_t kind = data[at++];
    size_t len = 0;
    if (at + 2 <= size) len = data[at] | static_cast<size_t>(data[at + 1]) << 8;
    at = std::min(at + 2, size);
    len = std::min(len, size - at);
    out.push_back({kind, absl::string_view(reinterpret_cast<const char*>(data) + at, len)});
    at += len;
  }
  return out;
}

absl::Status CallAndWait(const char* what, int64_t cancel_after_ms,
                         const std::function<void(std::function<void(const absl::Status&)>)>& start,
                         const std::function<void()>& cancel) {
  struct Result {
    absl::Notification done;
    absl::Status status;
  };
  auto result = std::make_shared<Result>();
  start([result](const absl::Status& s) {
    result->status = s;
    result->done.Notify();
  });
  if (!result->done.WaitForNotificationWithTimeout(absl::Milliseconds(cancel_after_ms))) {
    cancel();
    if (!result->done.WaitForNotificationWithTimeout(absl::Seconds(kHangSeconds))) {
      std::fprintf(stderr, "%s did not answer %d s after it was cancelled\n", what, kHangSeconds);
      std::abort();
    }
  }
  return result->status;
}

}  // namespace fuzz
}  // namespace distflow
