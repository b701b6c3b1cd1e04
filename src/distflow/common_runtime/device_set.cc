#include "distflow/common_runtime/device_set.h"

#include <algorithm>
#include <tuple>

#include "distflow/core/logging.h"
#include "distflow/core/status.h"
#include "distflow/framework/types.h"

namespace distflow {
namespace {

// Sort key of the preference order: CPU first, then other types by name,
// then job, replica, task and id.
auto PreferenceKey(const ParsedDeviceName& n) {
  return std::make_tuple(n.type != kDeviceCpu, n.type, n.job, n.replica, n.task, n.id);
}

// The canonical spelling of a fully specified name; empty when `name` is not
// a fully specified device name.
std::string CanonicalFullName(absl::string_view name, ParsedDeviceName* parsed) {
  if (!device_name::Parse(name, parsed) || !device_name::IsFullySpecified(*parsed)) {
    return "";
  }
  return device_name::ToString(*parsed);
}

}  // namespace

absl::Status DeviceSet::AddDevice(const DeviceAttributes& attributes) {
  auto entry = std::make_unique<Entry>();
  const std::string name = CanonicalFullName(attributes.name(), &entry->parsed);
  if (name.empty()) {
    return errors::InvalidArgument("device name '", attributes.name(),
                                   "' is not a fully specified device name "
                                   "(/job:J/replica:R/task:T/device:TYPE:ID)");
  }
  if (!attributes.device_type().empty() && attributes.device_type() != entry->parsed.type) {
    return errors::InvalidArgument("device '", attributes.name(), "' has device_type '",
                                   attributes.device_type(), "' but its name says '",
                                   entry->parsed.type, "'");
  }
  if (by_name_.contains(name)) {
    return errors::InvalidArgument("device '", name, "' is already in the device set");
  }
  entry->attributes = attributes;
  entry->attributes.set_name(name);
  entry->attributes.set_device_type(entry->parsed.type);
  const Entry* raw = entry.get();
  entries_.push_back(std::move(entry));
  by_name_[name] = raw;
  by_attributes_[&raw->attributes] = raw;
  auto pos =
      std::upper_bound(ordered_.begin(), ordered_.end(), &raw->attributes,
                       [this](const DeviceAttributes* a, const DeviceAttributes* b) {
                         return PreferenceKey(parsed_name(a)) < PreferenceKey(parsed_name(b));
                       });
  ordered_.insert(pos, &raw->attributes);
  return absl::OkStatus();
}

absl::Status DeviceSet::SetClientDevice(absl::string_view name) {
  const DeviceAttributes* device = FindDeviceByName(name);
  if (device == nullptr) {
    return errors::InvalidArgument("client device '", name, "' is not in the device set");
  }
  client_device_ = device;
  return absl::OkStatus();
}

const DeviceAttributes* DeviceSet::client_device() const {
  if (client_device_ != nullptr) return client_device_;
  // ordered_ starts with the CPU devices when there are any.
  return ordered_.empty() ? nullptr : ordered_.front();
}

const DeviceAttributes* DeviceSet::FindDeviceByName(absl::string_view name) const {
  ParsedDeviceName parsed;
  const std::string canonical = CanonicalFullName(name, &parsed);
  if (canonical.empty()) return nullptr;
  auto it = by_name_.find(canonical);
  return it == by_name_.end() ? nullptr : &it->second->attributes;
}

std::vector<const DeviceAttributes*> DeviceSet::FindMatchingDevices(
    const ParsedDeviceName& spec) const {
  std::vector<const DeviceAttributes*> out;
  for (const DeviceAttributes* d : ordered_) {
    if (device_name::Matches(spec, parsed_name(d))) out.push_back(d);
  }
  return out;
}

std::vector<std::string> DeviceSet::DeviceNames() const {
  std::vector<std::string> names;
  names.reserve(ordered_.size());
  for (const DeviceAttributes* d : ordered_) names.push_back(d->name());
  return names;
}

const ParsedDeviceName& DeviceSet::parsed_name(const DeviceAttributes* device) const {
  auto it = by_attributes_.find(device);
  DF_CHECK(it != by_attributes_.end());
  return it->second->parsed;
}

}  // namespace distflow
