// GCC 12 reports false "may be used uninitialized" warnings inside the
// AVX-512 intrinsics that Eigen's GEMM inlines; the pragma must
// precede every include to cover them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "distflow/kernels/matmul.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "Eigen/Core"

namespace distflow {
namespace {

// Views of a row-major buffer. One map type per storage order serves the
// whole matrix and its row or column blocks, so each (type, order, order)
// combination instantiates a single GEMM.
template <typename T, int Order>
using ConstMatrixMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>,
                                  Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename T>
using OutMatrixMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
                                Eigen::Unaligned, Eigen::OuterStride<>>;

// A rows x cols matrix at p in the given storage order, packed.
template <typename T, int Order>
ConstMatrixMap<T, Order> View(const T* p, int64_t rows, int64_t cols) {
  return ConstMatrixMap<T, Order>(p, rows, cols,
                                  Eigen::OuterStride<>(Order == Eigen::RowMajor ? cols : rows));
}

// Rows [start, start + len) of m (taken by value: a map of a mutable
// matrix yields mutable blocks).
template <typename M>
M MiddleRows(M m, int64_t start, int64_t len) {
  const bool row_major = M::IsRowMajor;
  return M(m.data() + start * (row_major ? m.outerStride() : 1), len, m.cols(),
           Eigen::OuterStride<>(m.outerStride()));
}
// Columns [start, start + len) of m.
template <typename M>
M MiddleCols(M m, int64_t start, int64_t len) {
  const bool row_major = M::IsRowMajor;
  return M(m.data() + start * (row_major ? 1 : m.outerStride()), m.rows(), len,
           Eigen::OuterStride<>(m.outerStride()));
}

// Below this many flops per block, a hand-off to another thread costs more
// than the block saves.
constexpr double kMinFlopsPerBlock = 4.0 * 1024 * 1024;
// Blocks are whole multiples of this many rows or columns, so Eigen's
// register tiles are not cut at block edges.
constexpr int64_t kBlockAlign = 16;

// c = a * b, split over the pool when large.
template <typename T, int OrderA, int OrderB>
void Gemm(ThreadPool* pool, const ConstMatrixMap<T, OrderA>& a, const ConstMatrixMap<T, OrderB>& b,
          T* c) {
  const int64_t m = a.rows(), k = a.cols(), n = b.cols();
  OutMatrixMap<T> out(c, m, n, Eigen::OuterStride<>(n));
  if (k == 0) {
    out.setZero();
    return;
  }
  const double flops = 2.0 * m * n * k;
  int64_t blocks = pool == nullptr ? 1 : pool->NumThreads();
  blocks = std::min<int64_t>(blocks, static_cast<int64_t>(flops / kMinFlopsPerBlock));
  const bool split_rows = m >= n;
  const int64_t dim = split_rows ? m : n;
  blocks = std::min(blocks, (dim + kBlockAlign - 1) / kBlockAlign);
  if (blocks <= 1) {
    out.noalias() = a * b;
    return;
  }
  int64_t block = (dim + blocks - 1) / blocks;
  block = (block + kBlockAlign - 1) / kBlockAlign * kBlockAlign;
  blocks = (dim + block - 1) / block;
  // The cost makes ParallelFor give each block its own shard.
  pool->ParallelFor(blocks, std::numeric_limits<int32_t>::max(), [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      const int64_t start = i * block;
      const int64_t len = std::min(block, dim - start);
      if (split_rows) {
        MiddleRows(out, start, len).noalias() = MiddleRows(a, start, len) * b;
      } else {
        MiddleCols(out, start, len).noalias() = a * MiddleCols(b, start, len);
      }
    }
  });
}

// A k x m row-major buffer is an m x k column-major matrix: transposes are
// storage orders, not copies.
template <typename T>
void GemmAnyOrder(ThreadPool* pool, const T* a, bool transpose_a, const T* b, bool transpose_b,
                  int64_t m, int64_t k, int64_t n, T* c) {
  constexpr int kRow = Eigen::RowMajor, kCol = Eigen::ColMajor;
  if (!transpose_a && !transpose_b) {
    Gemm<T, kRow, kRow>(pool, View<T, kRow>(a, m, k), View<T, kRow>(b, k, n), c);
  } else if (!transpose_a) {
    Gemm<T, kRow, kCol>(pool, View<T, kRow>(a, m, k), View<T, kCol>(b, k, n), c);
  } else if (!transpose_b) {
    Gemm<T, kCol, kRow>(pool, View<T, kCol>(a, m, k), View<T, kRow>(b, k, n), c);
  } else {
    Gemm<T, kCol, kCol>(pool, View<T, kCol>(a, m, k), View<T, kCol>(b, k, n), c);
  }
}

// Returns a row-major rows x cols copy of the transpose of the cols x rows
// row-major matrix p.
template <typename T>
std::vector<T> Transposed(const T* p, int64_t rows, int64_t cols) {
  std::vector<T> t(rows * cols);
  for (int64_t i = 0; i < cols; ++i) {
    for (int64_t j = 0; j < rows; ++j) t[j * cols + i] = p[i * rows + j];
  }
  return t;
}

}  // namespace

template <typename T>
void MatMulRowMajor(ThreadPool* pool, const T* a, bool transpose_a, const T* b, bool transpose_b,
                    int64_t m, int64_t k, int64_t n, T* c) {
  if constexpr (std::is_floating_point_v<T>) {
    GemmAnyOrder(pool, a, transpose_a, b, transpose_b, m, k, n, c);
  } else {
    // Integer products are rare: transpose by copying so that only one GEMM
    // per type is compiled.
    constexpr int kRow = Eigen::RowMajor;
    std::vector<T> at, bt;
    if (transpose_a) {
      at = Transposed(a, m, k);
      a = at.data();
    }
    if (transpose_b) {
      bt = Transposed(b, k, n);
      b = bt.data();
    }
    Gemm<T, kRow, kRow>(pool, View<T, kRow>(a, m, k), View<T, kRow>(b, k, n), c);
  }
}

template <>
void MatMulRowMajor<bfloat16>(ThreadPool* pool, const bfloat16* a, bool transpose_a,
                              const bfloat16* b, bool transpose_b, int64_t m, int64_t k, int64_t n,
                              bfloat16* c) {
  std::vector<float> fa(m * k), fb(k * n), fc(m * n);
  for (size_t i = 0; i < fa.size(); ++i) fa[i] = static_cast<float>(a[i]);
  for (size_t i = 0; i < fb.size(); ++i) fb[i] = static_cast<float>(b[i]);
  GemmAnyOrder(pool, fa.data(), transpose_a, fb.data(), transpose_b, m, k, n, fc.data());
  for (size_t i = 0; i < fc.size(); ++i) c[i] = bfloat16(fc[i]);
}

template void MatMulRowMajor<float>(ThreadPool*, const float*, bool, const float*, bool, int64_t,
                                    int64_t, int64_t, float*);
template void MatMulRowMajor<double>(ThreadPool*, const double*, bool, const double*, bool, int64_t,
                                     int64_t, int64_t, double*);
template void MatMulRowMajor<int32_t>(ThreadPool*, const int32_t*, bool, const int32_t*, bool,
                                      int64_t, int64_t, int64_t, int32_t*);
template void MatMulRowMajor<int64_t>(ThreadPool*, const int64_t*, bool, const int64_t*, bool,
                                      int64_t, int64_t, int64_t, int64_t*);

}  // namespace distflow
