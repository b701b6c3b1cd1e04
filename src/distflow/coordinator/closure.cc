#include "distflow/coordinator/closure.h"

#include "distflow/core/status.h"

namespace distflow {

absl::StatusOr<std::vector<Tensor>> Closure::Execute(int worker_index) {
  attempts_.fetch_add(1, std::memory_order_relaxed);
  if (cancellation_ == nullptr) {
    return errors::Internal("a closure ran without being taken from its queue");
  }
  ClosureContext ctx;
  ctx.worker_index = worker_index;
  ctx.cancellation = cancellation_.get();
  return fn_(ctx);
}

}  // namespace distflow
