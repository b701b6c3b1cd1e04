// DeviceMgr: owns the devices of one process (or session) and finds them by
// name. A lookup accepts the full name ("/job:localhost/replica:0/task:0/
// device:CPU:1"), or any partial name that matches exactly one device
// ("/device:CPU:1", "CPU:1", the legacy "/cpu:1"). Immutable after
// construction: every method is thread-safe.
#ifndef DISTFLOW_COMMON_RUNTIME_DEVICE_MGR_H_
#define DISTFLOW_COMMON_RUNTIME_DEVICE_MGR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/common_runtime/device.h"

namespace distflow {

class DeviceMgr {
 public:
  // REQUIRES: device names are distinct.
  explicit DeviceMgr(std::vector<std::unique_ptr<Device>> devices);
  ~DeviceMgr();
  DeviceMgr(const DeviceMgr&) = delete;
  DeviceMgr& operator=(const DeviceMgr&) = delete;

  // The device `name` refers to. NotFound listing the known devices when
  // none matches; InvalidArgument when the name is malformed or matches
  // more than one device.
  absl::StatusOr<Device*> LookupDevice(absl::string_view name) const;

  // In creation order.
  const std::vector<Device*>& ListDevices() const { return devices_; }
  std::vector<DeviceAttributes> ListDeviceAttributes() const;
  // The first CPU device, or nullptr when there is none.
  Device* HostCPU() const;
  // Full names joined by ", ", for error messages.
  std::string DeviceNames() const;

 private:
  std::vector<std::unique_ptr<Device>> owned_;
  std::vector<Device*> devices_;
  absl::flat_hash_map<std::string, Device*> by_full_name_;
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_DEVICE_MGR_H_
