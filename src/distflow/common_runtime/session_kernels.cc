#include "distflow/common_runtime/session_kernels.h"

#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"

namespace distflow {

namespace {

bool IsShared(const NodeDef& def) {
  const std::string& op = def.op();
  if (op == "_Send" || op == "_Recv" || op == "_HostSend" || op == "_HostRecv") {
    return false;
  }
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp(op);
  return reg != nullptr && reg->op_def.is_stateful();
}

absl::StatusOr<std::shared_ptr<OpKernel>> Make(Device* device, const NodeDef& def) {
  DF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                      KernelRegistry::Global()->CreateKernel(device, def));
  return std::shared_ptr<OpKernel>(std::move(kernel));
}

}  // namespace

absl::StatusOr<std::shared_ptr<OpKernel>> SessionKernels::Get(Device* device, const NodeDef& def) {
  if (!IsShared(def)) return Make(device, def);
  Key key(device->name(), def.name());
  {
    absl::MutexLock lock(&mu_);
    auto it = stateful_.find(key);
    if (it != stateful_.end()) return it->second;
  }
  // Made outside the lock (a kernel's constructor may be slow); the first
  // one stored wins.
  DF_ASSIGN_OR_RETURN(std::shared_ptr<OpKernel> kernel, Make(device, def));
  absl::MutexLock lock(&mu_);
  return stateful_.try_emplace(std::move(key), std::move(kernel)).first->second;
}

void SessionKernels::Clear() {
  absl::flat_hash_map<Key, std::shared_ptr<OpKernel>> dropped;
  {
    absl::MutexLock lock(&mu_);
    dropped.swap(stateful_);
  }
}

}  // namespace distflow
