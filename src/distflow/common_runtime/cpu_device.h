// The CPU device: runs kernels on the host, sharing one intra-op thread pool
// among all CPU devices of a session. CreateCpuDevices builds the CPU devices
// a ConfigProto asks for. Thread-safe: the device is immutable and the pool
// is thread-safe.
#ifndef DISTFLOW_COMMON_RUNTIME_CPU_DEVICE_H_
#define DISTFLOW_COMMON_RUNTIME_CPU_DEVICE_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/common_runtime/device.h"
#include "distflow/config.pb.h"
#include "distflow/core/threadpool.h"

namespace distflow {

class CpuDevice : public Device {
 public:
  // `intra_op_pool` may be null (kernels then run single-threaded).
  CpuDevice(DeviceAttributes attributes, std::shared_ptr<ThreadPool> intra_op_pool);
  ~CpuDevice() override;

  ThreadPool* intra_op_threadpool() const override { return intra_op_pool_.get(); }

 private:
  std::shared_ptr<ThreadPool> intra_op_pool_;
};

// Host memory CPU devices get by default (they allocate from the heap).
inline constexpr int64_t kCpuMemoryLimit = int64_t{256} << 30;

// config.device_count["CPU"] devices (default 1) named
// "<task_prefix>/device:CPU:<i>", e.g. task_prefix
// "/job:localhost/replica:0/task:0", all sharing an intra-op pool of
// config.intra_op_parallelism_threads threads (0: one per core).
// InvalidArgument for a negative count or thread number or a malformed
// prefix.
absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateCpuDevices(
    const ConfigProto& config, absl::string_view task_prefix);

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_CPU_DEVICE_H_
