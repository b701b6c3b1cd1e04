#include "distflow/kernels/cwise_ops.h"

namespace distflow {

void ShardElementwise(OpKernelContext* ctx, int64_t n, int64_t cost_per_element,
                      absl::FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  ThreadPool* pool = ctx->intra_op_threadpool();
  if (pool == nullptr || n * cost_per_element < kMinParallelCost) {
    fn(0, n);
    return;
  }
  pool->ParallelFor(n, cost_per_element, fn);
}

}  // namespace distflow
