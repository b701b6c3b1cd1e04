// Device: a place where kernels run, as the runtime sees it — a DeviceBase
// for kernels plus the DeviceAttributes the placer, the partitioner and
// remote peers use (full name, type, memory limit and a random 64-bit
// incarnation that tells a restarted process's device from its predecessor).
// A plain Device describes a device (e.g. a remote one); CpuDevice also runs
// kernels. Every Device owns a ResourceMgr (default container "localhost")
// holding the variables, queues and other resources that live on it across
// steps, for as long as the device lives. Immutable after construction
// (the ResourceMgr is itself thread-safe): every method is thread-safe.
#ifndef DISTFLOW_COMMON_RUNTIME_DEVICE_H_
#define DISTFLOW_COMMON_RUNTIME_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "distflow/device_attributes.pb.h"
#include "distflow/framework/device_base.h"
#include "distflow/framework/device_name_utils.h"

namespace distflow {

class Device : public DeviceBase {
 public:
  // Takes the attributes as given, except that a zero incarnation is
  // replaced by a fresh random nonzero one.
  // REQUIRES: attributes.name() is a fully specified device name.
  explicit Device(DeviceAttributes attributes);
  ~Device() override;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& name() const override { return attributes_.name(); }
  const std::string& device_type() const override { return attributes_.device_type(); }
  const DeviceAttributes& attributes() const { return attributes_; }
  uint64_t incarnation() const { return attributes_.incarnation(); }
  const ParsedDeviceName& parsed_name() const { return parsed_name_; }
  ResourceMgr* resource_manager() const override { return resource_mgr_.get(); }

  // Waits until work this device has queued is done. CPU kernels finish
  // inside Compute, so the default returns at once.
  virtual absl::Status Sync() { return absl::OkStatus(); }

  // A nonzero random incarnation.
  static uint64_t NewIncarnation();

 private:
  DeviceAttributes attributes_;
  ParsedDeviceName parsed_name_;
  const std::unique_ptr<ResourceMgr> resource_mgr_;
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_DEVICE_H_
