#include "distflow/training/device_setter.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

bool IsVariableOp(absl::string_view op_type) {
  return op_type == "VarHandleOp" || op_type == "VariableV2" || op_type == "Variable";
}

}  // namespace

Scope ReplicaDeviceSetter(const Scope& scope, int ps_tasks, const std::string& worker_device,
                          const std::string& ps_job) {
  if (ps_tasks < 0) {
    scope.UpdateStatus(
        errors::InvalidArgument("ReplicaDeviceSetter needs ps_tasks >= 0, got ", ps_tasks));
    return scope;
  }
  if (ps_tasks == 0) return scope.WithDevice(worker_device);
  auto next_task = std::make_shared<int>(0);
  return scope.WithDeviceFunction(
      [next_task, ps_tasks, worker_device, ps_job](absl::string_view op_type) -> std::string {
        if (!IsVariableOp(op_type)) return worker_device;
        const int task = (*next_task)++ % ps_tasks;
        return absl::StrCat("/job:", ps_job, "/task:", task);
      });
}

}  // namespace distflow
