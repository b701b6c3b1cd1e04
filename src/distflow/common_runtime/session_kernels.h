// SessionKernels: the one rule by which executors share kernels. A stateful
// op's kernel (a variable, a queue, a random stream) is made once per
// (device, node name) and shared by every executor that one session builds —
// a DirectSession, or one master session's graphs on a worker — whichever run
// signature the executor serves, so the state survives across signatures.
// Every other kernel, and the transfer and call-frame ops (_Send/_Recv,
// _Arg/_Retval, which are stateful only to keep them out of constant
// folding), is made per executor. It also
// owns the function runtimes its kernels call through (one per device and
// function library), so they live as long as any kernel that holds one.
// Thread-safe.
#ifndef DISTFLOW_COMMON_RUNTIME_SESSION_KERNELS_H_
#define DISTFLOW_COMMON_RUNTIME_SESSION_KERNELS_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/device.h"
#include "distflow/framework/function_library_runtime.h"
#include "distflow/framework/op_kernel.h"
#include "distflow/function.pb.h"
#include "distflow/node_def.pb.h"

namespace distflow {

class SessionKernels {
 public:
  SessionKernels() = default;
  SessionKernels(const SessionKernels&) = delete;
  SessionKernels& operator=(const SessionKernels&) = delete;

  // The kernel of `def` on `device`: the shared one for a stateful op, a new
  // one otherwise, built with `function_library` (may be null). Errors are
  // the kernel registry's (naming the node).
  absl::StatusOr<std::shared_ptr<OpKernel>> Get(Device* device, const NodeDef& def,
                                                FunctionLibraryRuntime* function_library = nullptr);

  // The function runtime of `device` for `library`, made on first use and
  // kept while this object lives; nullptr for an empty library. The
  // library's errors (see FunctionLibraryDefinition::Create).
  absl::StatusOr<FunctionLibraryRuntime*> FunctionLibrary(Device* device,
                                                          const FunctionDefLibrary& library);

  // Forgets every shared kernel (executors keep the ones they hold).
  void Clear();

 private:
  using Key = std::pair<std::string, std::string>;  // (device, node name)
  absl::Mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<OpKernel>> stateful_ ABSL_GUARDED_BY(mu_);
  // (device, serialized library) -> runtime.
  absl::flat_hash_map<Key, std::unique_ptr<FunctionLibraryRuntime>> function_libraries_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_SESSION_KERNELS_H_
