// The libibverbs provider: the verbs protocol over RDMA hardware. One
// protection domain, one completion queue and completion channel per
// provider (a thread waits on the channel and dispatches completions to the
// connections), one RC queue pair per connection. Regions are ibv_reg_mr
// registrations; a write's sources outside registered memory are
// registered for the time of the write. Endpoints carry the queue pair's
// LID, GID, QP number and first packet sequence number.
// Built only when libibverbs is found (DISTFLOW_HAVE_IBVERBS); the
// provider is made only where an RDMA device is present.
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_IBVERBS_PROVIDER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_IBVERBS_PROVIDER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "distflow/distributed_runtime/verbs/verbs_provider.h"

namespace distflow {

// The provider on the first RDMA device. Unimplemented when built without
// libibverbs; NotFound when the machine has no device.
absl::StatusOr<std::unique_ptr<VerbsProvider>> NewIbverbsProvider();

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_IBVERBS_PROVIDER_H_
