// Dense matrix products on row-major buffers: the engine under MatMul and
// BatchMatMulV2. Each product is an Eigen GEMM; a large product is split
// into blocks of output rows (or columns, when the output is wide) computed
// in parallel on an intra-op pool, each block its own GEMM. bfloat16
// multiplies in float and rounds the result. Stateless and thread-safe.
#ifndef DISTFLOW_KERNELS_MATMUL_H_
#define DISTFLOW_KERNELS_MATMUL_H_

#include <cstdint>

#include "distflow/core/threadpool.h"
#include "distflow/framework/types.h"

namespace distflow {

// c = op(a) * op(b), where op(a) is m x k and op(b) is k x n. `a` is stored
// row-major as m x k, or as k x m when transpose_a (likewise `b`: k x n, or
// n x k when transpose_b); `c` is m x n row-major. k == 0 gives zeros.
// `pool` may be null (single-threaded).
// REQUIRES: c does not overlap a or b. Instantiated for float, double,
// int32_t, int64_t and bfloat16.
template <typename T>
void MatMulRowMajor(ThreadPool* pool, const T* a, bool transpose_a, const T* b, bool transpose_b,
                    int64_t m, int64_t k, int64_t n, T* c);

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_MATMUL_H_
