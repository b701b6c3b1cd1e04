#include "distflow/common_runtime/device.h"

#include <utility>

#include "distflow/core/logging.h"
#include "distflow/core/random.h"
#include "distflow/framework/resource_mgr.h"

namespace distflow {

Device::Device(DeviceAttributes attributes)
    : attributes_(std::move(attributes)), resource_mgr_(std::make_unique<ResourceMgr>()) {
  if (attributes_.incarnation() == 0) {
    attributes_.set_incarnation(NewIncarnation());
  }
  DF_CHECK_MSG(device_name::Parse(attributes_.name(), &parsed_name_) &&
                   device_name::IsFullySpecified(parsed_name_),
               attributes_.name());
}

Device::~Device() = default;

uint64_t Device::NewIncarnation() {
  uint64_t v = 0;
  while (v == 0) v = random::New64();
  return v;
}

}  // namespace distflow
