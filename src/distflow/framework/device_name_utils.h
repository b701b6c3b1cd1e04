// Parsing and matching device names: "/job:J/replica:R/task:T/device:CPU:N".
// Any part may be missing (a partial name, used as a placement constraint);
// "*" as the id means any. The legacy forms "/cpu:0" and "/device:cpu:0" are
// accepted. All functions are pure and thread-safe.
#ifndef DISTFLOW_FRAMEWORK_DEVICE_NAME_UTILS_H_
#define DISTFLOW_FRAMEWORK_DEVICE_NAME_UTILS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace distflow {

struct ParsedDeviceName {
  bool has_job = false;
  std::string job;
  bool has_replica = false;
  int replica = 0;
  bool has_task = false;
  int task = 0;
  bool has_type = false;
  std::string type;  // upper case, e.g. "CPU"
  bool has_id = false;
  int id = 0;

  bool operator==(const ParsedDeviceName& o) const;
};

namespace device_name {

// False for a malformed name. "" parses as the empty specification.
bool Parse(absl::string_view name, ParsedDeviceName* out);
// InvalidArgument naming the device string when malformed.
absl::Status ParseOrError(absl::string_view name, ParsedDeviceName* out);

// The canonical string of whatever parts are set.
std::string ToString(const ParsedDeviceName& name);
std::string FullName(absl::string_view job, int replica, int task, absl::string_view type, int id);

// Every part is set.
bool IsFullySpecified(const ParsedDeviceName& name);
// True iff every part set in `pattern` equals that part of `name`.
bool Matches(const ParsedDeviceName& pattern, const ParsedDeviceName& name);
// Whether two partial specifications can name the same device.
bool AreCompatible(const ParsedDeviceName& a, const ParsedDeviceName& b);
// Fills the parts `target` lacks from `other`; InvalidArgument on a conflict
// (with allow_soft_placement, a type/id conflict keeps `target`'s).
absl::Status Merge(ParsedDeviceName* target, const ParsedDeviceName& other,
                   bool allow_soft_placement = false);

// "/job:J/replica:R/task:T" of a full name (the address space it lives in).
std::string TaskName(const ParsedDeviceName& name);
// True iff both names are in the same job, replica and task.
bool IsSameAddressSpace(absl::string_view a, absl::string_view b);

}  // namespace device_name
}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_DEVICE_NAME_UTILS_H_
