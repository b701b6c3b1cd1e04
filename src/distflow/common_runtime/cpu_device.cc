#include "distflow/common_runtime/cpu_device.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/types.h"

namespace distflow {

CpuDevice::CpuDevice(DeviceAttributes attributes, std::shared_ptr<ThreadPool> intra_op_pool)
    : Device(std::move(attributes)), intra_op_pool_(std::move(intra_op_pool)) {}

CpuDevice::~CpuDevice() = default;

absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateCpuDevices(
    const ConfigProto& config, absl::string_view task_prefix) {
  int count = 1;
  auto it = config.device_count().find(kDeviceCpu);
  if (it != config.device_count().end()) count = it->second;
  if (count < 0) {
    return errors::InvalidArgument("device_count[\"CPU\"] must be >= 0, got ", count);
  }
  if (config.intra_op_parallelism_threads() < 0) {
    return errors::InvalidArgument("intra_op_parallelism_threads must be >= 0, got ",
                                   config.intra_op_parallelism_threads());
  }
  ParsedDeviceName prefix;
  if (!device_name::Parse(task_prefix, &prefix) || !prefix.has_job || !prefix.has_replica ||
      !prefix.has_task || prefix.has_type) {
    return errors::InvalidArgument("Malformed task name '", task_prefix,
                                   "'; expected /job:J/replica:R/task:T");
  }
  std::vector<std::unique_ptr<Device>> devices;
  if (count == 0) return devices;
  const int threads = config.intra_op_parallelism_threads() > 0
                          ? config.intra_op_parallelism_threads()
                          : NumSchedulableCPUs();
  auto pool = std::make_shared<ThreadPool>("intra_op", threads);
  for (int i = 0; i < count; ++i) {
    DeviceAttributes attrs;
    attrs.set_name(device_name::FullName(prefix.job, prefix.replica, prefix.task, kDeviceCpu, i));
    attrs.set_device_type(kDeviceCpu);
    attrs.set_memory_limit(kCpuMemoryLimit);
    attrs.set_physical_device_desc("host CPU");
    devices.push_back(std::make_unique<CpuDevice>(std::move(attrs), pool));
  }
  return devices;
}

}  // namespace distflow
