#include "distflow/common_runtime/device_mgr.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"
#include "distflow/framework/types.h"

namespace distflow {

DeviceMgr::DeviceMgr(std::vector<std::unique_ptr<Device>> devices) : owned_(std::move(devices)) {
  for (const auto& d : owned_) {
    devices_.push_back(d.get());
    const bool inserted = by_full_name_.emplace(d->name(), d.get()).second;
    DF_CHECK_MSG(inserted, d->name());
  }
}

DeviceMgr::~DeviceMgr() = default;

absl::StatusOr<Device*> DeviceMgr::LookupDevice(absl::string_view name) const {
  auto it = by_full_name_.find(name);
  if (it != by_full_name_.end()) return it->second;
  ParsedDeviceName pattern;
  // "CPU:1" is the local name of "/device:CPU:1".
  const bool parsed =
      !name.empty() &&
      (name[0] == '/' ? device_name::Parse(name, &pattern)
                      : device_name::Parse(absl::StrCat("/device:", name), &pattern));
  if (!parsed) {
    return errors::InvalidArgument("Malformed device name '", name, "'");
  }
  Device* found = nullptr;
  for (Device* d : devices_) {
    if (!device_name::Matches(pattern, d->parsed_name())) continue;
    if (found != nullptr) {
      return errors::InvalidArgument("Device name '", name,
                                     "' matches more than one device: ", found->name(), " and ",
                                     d->name());
    }
    found = d;
  }
  if (found == nullptr) {
    return errors::NotFound("Unknown device '", name, "'; available devices: ", DeviceNames());
  }
  return found;
}

std::vector<DeviceAttributes> DeviceMgr::ListDeviceAttributes() const {
  std::vector<DeviceAttributes> out;
  out.reserve(devices_.size());
  for (const Device* d : devices_) out.push_back(d->attributes());
  return out;
}

Device* DeviceMgr::HostCPU() const {
  for (Device* d : devices_) {
    if (d->device_type() == kDeviceCpu) return d;
  }
  return nullptr;
}

std::string DeviceMgr::DeviceNames() const {
  return absl::StrJoin(devices_, ", ",
                       [](std::string* out, const Device* d) { out->append(d->name()); });
}

}  // namespace distflow
