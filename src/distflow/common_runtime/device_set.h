// The devices a session or master can place nodes on, each described by its
// DeviceAttributes (full name, device type, incarnation). Devices are looked
// up by full name or matched against a partial name; every list this class
// returns is in one stable preference order: CPU devices before other types
// (other types by name), then by job, replica, task and device id, ascending.
// The client device is where client-terminated feeds and fetches live.
//
// Not thread-safe while devices are being added; afterwards const methods may
// be called concurrently. Pointers it returns stay valid as long as the set.
#ifndef DISTFLOW_COMMON_RUNTIME_DEVICE_SET_H_
#define DISTFLOW_COMMON_RUNTIME_DEVICE_SET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "distflow/device_attributes.pb.h"
#include "distflow/framework/device_name_utils.h"

namespace distflow {

class DeviceSet {
 public:
  DeviceSet() = default;
  DeviceSet(const DeviceSet&) = delete;
  DeviceSet& operator=(const DeviceSet&) = delete;
  DeviceSet(DeviceSet&&) = default;
  DeviceSet& operator=(DeviceSet&&) = default;

  // Adds a device. Its name must be a fully specified device name (any
  // accepted spelling; it is stored in canonical form); an empty device_type
  // is filled from the name. InvalidArgument naming the device when the name
  // is malformed or partial, when device_type disagrees with the name, or
  // when a device of that name is already in the set.
  absl::Status AddDevice(const DeviceAttributes& attributes);

  // Makes the named device the client device. InvalidArgument naming the
  // device when it is not in the set.
  absl::Status SetClientDevice(absl::string_view name);

  // The device set by SetClientDevice; otherwise the first CPU device in
  // preference order, otherwise the first device. nullptr iff the set is
  // empty.
  const DeviceAttributes* client_device() const;

  // The device whose full name is `name` (any accepted spelling); nullptr
  // when there is none.
  const DeviceAttributes* FindDeviceByName(absl::string_view name) const;

  // Every device whose name matches the (possibly partial) `spec`, in
  // preference order.
  std::vector<const DeviceAttributes*> FindMatchingDevices(const ParsedDeviceName& spec) const;

  // All devices in preference order.
  const std::vector<const DeviceAttributes*>& devices() const { return ordered_; }
  // Their canonical names, in preference order.
  std::vector<std::string> DeviceNames() const;
  // The parsed form of a device of this set. REQUIRES: `device` was returned
  // by this set.
  const ParsedDeviceName& parsed_name(const DeviceAttributes* device) const;

  bool empty() const { return ordered_.empty(); }
  int size() const { return static_cast<int>(ordered_.size()); }

 private:
  struct Entry {
    DeviceAttributes attributes;
    ParsedDeviceName parsed;
  };

  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<const DeviceAttributes*> ordered_;
  absl::flat_hash_map<std::string, const Entry*> by_name_;
  absl::flat_hash_map<const DeviceAttributes*, const Entry*> by_attributes_;
  const DeviceAttributes* client_device_ = nullptr;
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_DEVICE_SET_H_
