#include "distflow/kernels/cwise_ops.h"

namespace distflow {

void ShardElementwise(OpKernelContext* ctx, int64_t n, int64_t cost_per_element,
                      const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  // Below ~100k cycles of work a hand-off to other threads costs more than
  // it saves.
  constexpr int64_t kMinParallelCost = 100000;
  ThreadPool* pool = ctx->intra_op_threadpool();
  if (pool == nullptr || n * cost_per_element < kMinParallelCost) {
    fn(0, n);
    return;
  }
  pool->ParallelFor(n, cost_per_element, fn);
}

}  // namespace distflow
