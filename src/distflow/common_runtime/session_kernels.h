// SessionKernels: the one rule by which executors share kernels. A stateful
// op's kernel (a variable, a queue, a random stream) is made once per
// (device, node name) and shared by every executor that one session builds —
// a DirectSession, or one master session's graphs on a worker — whichever run
// signature the executor serves, so the state survives across signatures.
// Every other kernel, and the transfer ops (_Send/_Recv, which are stateful
// only to keep them out of constant folding), is made per executor.
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
#include "distflow/framework/op_kernel.h"
#include "distflow/node_def.pb.h"

namespace distflow {

class SessionKernels {
 public:
  SessionKernels() = default;
  SessionKernels(const SessionKernels&) = delete;
  SessionKernels& operator=(const SessionKernels&) = delete;

  // The kernel of `def` on `device`: the shared one for a stateful op, a new
  // one otherwise. Errors are the kernel registry's (naming the node).
  absl::StatusOr<std::shared_ptr<OpKernel>> Get(Device* device, const NodeDef& def);

  // Forgets every shared kernel (executors keep the ones they hold).
  void Clear();

 private:
  using Key = std::pair<std::string, std::string>;  // (device, node name)
  absl::Mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<OpKernel>> stateful_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_SESSION_KERNELS_H_
