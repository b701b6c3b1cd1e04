// Helpers shared by the CPU neural-network kernels: the type their arithmetic
// is done in (float for bfloat16, T otherwise), a parallel loop over rows on
// the device's intra-op pool, and the numerically stable log-sum-exp of a row
// that Softmax, LogSoftmax and the cross-entropy kernels all need.
// Everything here is stateless and thread-safe.
#ifndef DISTFLOW_KERNELS_NN_KERNEL_UTIL_H_
#define DISTFLOW_KERNELS_NN_KERNEL_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "distflow/core/threadpool.h"
#include "distflow/framework/op_kernel.h"
#include "distflow/framework/types.h"

namespace distflow {
namespace nn {

template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<bfloat16> {
  using type = float;
};
// The type a kernel computes in for elements of type T.
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

// Calls fn(begin, end) over disjoint ranges covering [0, total), in parallel
// on ctx's intra-op pool when there is one and the work is large enough.
// `cost_per_unit` is roughly the cycles one unit takes.
inline void ParallelFor(OpKernelContext* ctx, int64_t total, int64_t cost_per_unit,
                        const std::function<void(int64_t, int64_t)>& fn) {
  ThreadPool* pool = ctx->intra_op_threadpool();
  if (pool == nullptr) {
    if (total > 0) fn(0, total);
    return;
  }
  pool->ParallelFor(total, cost_per_unit, fn);
}

// For the n values x[0], x[stride], ..., x[(n - 1) * stride]: sets *max to
// their maximum and returns log(sum(exp(x[i] - max))), computed without
// overflow. For n == 0, *max is -inf and the result is -inf.
template <typename T>
ComputeType<T> RowMaxAndLogSumExp(const T* x, int64_t n, int64_t stride, ComputeType<T>* max) {
  using C = ComputeType<T>;
  C m = -std::numeric_limits<C>::infinity();
  for (int64_t j = 0; j < n; ++j) m = std::max(m, static_cast<C>(x[j * stride]));
  C sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += std::exp(static_cast<C>(x[j * stride]) - m);
  *max = m;
  return std::log(sum);
}

}  // namespace nn
}  // namespace distflow

#endif  // DISTFLOW_KERNELS_NN_KERNEL_UTIL_H_
