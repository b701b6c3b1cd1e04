#include "distflow/common_runtime/session_kernels.h"

#include "distflow/common_runtime/local_function_library_runtime.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"

namespace distflow {

namespace {

bool IsShared(const NodeDef& def) {
  const std::string& op = def.op();
  if (op == "_Send" || op == "_Recv" || op == "_HostSend" || op == "_HostRecv" || op == "_Arg" ||
      op == "_Retval") {
    return false;
  }
  const OpRegistrationData* reg = OpRegistry::Global()->LookUp(op);
  return reg != nullptr && reg->op_def.is_stateful();
}

absl::StatusOr<std::shared_ptr<OpKernel>> Make(Device* device, const NodeDef& def,
                                               FunctionLibraryRuntime* function_library) {
  DF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                      KernelRegistry::Global()->CreateKernel(device, def, function_library));
  return std::shared_ptr<OpKernel>(std::move(kernel));
}

}  // namespace

absl::StatusOr<std::shared_ptr<OpKernel>> SessionKernels::Get(
    Device* device, const NodeDef& def, FunctionLibraryRuntime* function_library) {
  if (!IsShared(def)) return Make(device, def, function_library);
  Key key(device->name(), def.name());
  {
    absl::MutexLock lock(&mu_);
    auto it = stateful_.find(key);
    if (it != stateful_.end()) return it->second;
  }
  // Made outside the lock (a kernel's constructor may be slow); the first
  // one stored wins.
  DF_ASSIGN_OR_RETURN(std::shared_ptr<OpKernel> kernel, Make(device, def, function_library));
  absl::MutexLock lock(&mu_);
  return stateful_.try_emplace(std::move(key), std::move(kernel)).first->second;
}

absl::StatusOr<FunctionLibraryRuntime*> SessionKernels::FunctionLibrary(
    Device* device, const FunctionDefLibrary& library) {
  if (library.function_size() == 0) return nullptr;
  Key key(device->name(), FunctionLibraryKey(library));
  absl::MutexLock lock(&mu_);
  auto it = function_libraries_.find(key);
  if (it != function_libraries_.end()) return it->second.get();
  DF_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionLibraryDefinition> definition,
                      FunctionLibraryDefinition::Create(library));
  auto runtime = std::make_unique<LocalFunctionLibraryRuntime>(device, std::move(definition));
  FunctionLibraryRuntime* raw = runtime.get();
  function_libraries_.emplace(std::move(key), std::move(runtime));
  return raw;
}

void SessionKernels::Clear() {
  absl::flat_hash_map<Key, std::shared_ptr<OpKernel>> dropped;
  {
    absl::MutexLock lock(&mu_);
    dropped.swap(stateful_);
  }
}

}  // namespace distflow
