#include "distflow/kernels/element_copy.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "distflow/core/logging.h"

namespace distflow {
namespace {

// Moves elements of N bytes with memcpy, which keeps byte moves free of type
// aliasing concerns and compiles to plain loads and stores.
template <size_t N>
struct BytesMover {
  static constexpr int64_t kSize = N;
  static void Run(const char* src, int64_t n, char* dst) {
    std::memcpy(dst, src, static_cast<size_t>(n) * N);
  }
  static void One(const char* src, char* dst) { std::memcpy(dst, src, N); }
  static void Strided(const char* src, int64_t n, int64_t stride, char* dst) {
    const int64_t step = stride * static_cast<int64_t>(N);
    for (int64_t k = 0; k < n; ++k, src += step, dst += N) std::memcpy(dst, src, N);
  }
};

struct StringMover {
  static constexpr int64_t kSize = sizeof(std::string);
  static void Run(const char* src, int64_t n, char* dst) {
    std::copy_n(reinterpret_cast<const std::string*>(src), n, reinterpret_cast<std::string*>(dst));
  }
  static void One(const char* src, char* dst) {
    *reinterpret_cast<std::string*>(dst) = *reinterpret_cast<const std::string*>(src);
  }
  static void Strided(const char* src, int64_t n, int64_t stride, char* dst) {
    const auto* s = reinterpret_cast<const std::string*>(src);
    auto* d = reinterpret_cast<std::string*>(dst);
    for (int64_t k = 0; k < n; ++k) d[k] = s[k * stride];
  }
};

// Calls fn(Mover{}) with the mover for dtype's elements.
template <typename Fn>
void WithMover(DataType dtype, Fn&& fn) {
  if (dtype == DT_STRING) return fn(StringMover{});
  switch (DataTypeSize(dtype)) {
    case 1:
      return fn(BytesMover<1>{});
    case 2:
      return fn(BytesMover<2>{});
    case 4:
      return fn(BytesMover<4>{});
    case 8:
      return fn(BytesMover<8>{});
    case 16:
      return fn(BytesMover<16>{});
    default:
      DF_CHECK_MSG(false, DataTypeString(dtype));
  }
}

template <typename Mover>
void StridedCopyImpl(const char* src, absl::Span<const int64_t> sizes,
                     absl::Span<const int64_t> strides, char* dst) {
  constexpr int64_t kSize = Mover::kSize;
  const int rank = static_cast<int>(sizes.size());
  const int64_t inner = sizes[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= sizes[d];
  DimVector index(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    if (inner_stride == 1) {
      Mover::Run(src, inner, dst);
    } else {
      Mover::Strided(src, inner, inner_stride, dst);
    }
    dst += inner * kSize;
    // Advance the row odometer over dims [0, rank - 1).
    for (int d = rank - 2; d >= 0; --d) {
      src += strides[d] * kSize;
      if (++index[d] < sizes[d]) break;
      src -= strides[d] * sizes[d] * kSize;
      index[d] = 0;
    }
  }
}

// The copy for a transposition: the source's contiguous dim is output dim
// `k`, not the last one. Walks kBlock x kBlock tiles of dims (k, last) so the
// source lines read for one tile are reused while they are still in cache;
// the other dims are walked with an odometer.
template <typename Mover>
void BlockedTransposeImpl(const char* src, absl::Span<const int64_t> sizes,
                          absl::Span<const int64_t> strides, int k, char* dst) {
  constexpr int64_t kSize = Mover::kSize;
  constexpr int64_t kBlock = 16;
  const int last = static_cast<int>(sizes.size()) - 1;
  DimVector dst_strides(sizes.size());
  int64_t n = 1;
  for (int d = last; d >= 0; --d) {
    dst_strides[d] = n;
    n *= sizes[d];
  }
  const int64_t rows = sizes[k], cols = sizes[last];
  const int64_t src_col = strides[last] * kSize;
  const int64_t dst_row = dst_strides[k] * kSize;
  DimVector others;
  int64_t outer = 1;
  for (int d = 0; d < last; ++d) {
    if (d == k) continue;
    others.push_back(d);
    outer *= sizes[d];
  }
  DimVector index(others.size(), 0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
      const int64_t r1 = std::min(rows, r0 + kBlock);
      for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
        const int64_t c1 = std::min(cols, c0 + kBlock);
        for (int64_t r = r0; r < r1; ++r) {
          const char* sp = src + r * kSize + c0 * src_col;
          char* dp = dst + r * dst_row + c0 * kSize;
          for (int64_t c = c0; c < c1; ++c, sp += src_col, dp += kSize) {
            Mover::One(sp, dp);
          }
        }
      }
    }
    for (int i = static_cast<int>(others.size()) - 1; i >= 0; --i) {
      const int d = static_cast<int>(others[i]);
      src += strides[d] * kSize;
      dst += dst_strides[d] * kSize;
      if (++index[i] < sizes[d]) break;
      src -= strides[d] * sizes[d] * kSize;
      dst -= dst_strides[d] * sizes[d] * kSize;
      index[i] = 0;
    }
  }
}

}  // namespace

size_t ElementBytes(DataType dtype) {
  return dtype == DT_STRING ? sizeof(std::string) : DataTypeSize(dtype);
}

void CopyElements(DataType dtype, const void* src, int64_t n, void* dst) {
  if (n <= 0) return;
  WithMover(dtype, [&](auto mover) {
    decltype(mover)::Run(static_cast<const char*>(src), n, static_cast<char*>(dst));
  });
}

void StridedCopy(DataType dtype, const void* src, absl::Span<const int64_t> sizes,
                 absl::Span<const int64_t> src_strides, void* dst) {
  DF_CHECK(sizes.size() == src_strides.size());
  // Drop size-1 dims and merge dims that are contiguous with the next one, so
  // the innermost loop runs as long as possible.
  DimVector merged_sizes, merged_strides;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return;
    if (sizes[d] == 1) continue;
    if (!merged_sizes.empty() && merged_strides.back() == src_strides[d] * sizes[d]) {
      merged_sizes.back() *= sizes[d];
      merged_strides.back() = src_strides[d];
    } else {
      merged_sizes.push_back(sizes[d]);
      merged_strides.push_back(src_strides[d]);
    }
  }
  if (merged_sizes.empty()) {
    merged_sizes.push_back(1);
    merged_strides.push_back(1);
  }
  // A source-contiguous dim other than the last one means a transposition.
  int contiguous = -1;
  if (merged_strides.back() != 1 && merged_strides.back() != 0) {
    for (size_t d = 0; d + 1 < merged_sizes.size(); ++d) {
      if (merged_strides[d] == 1) contiguous = static_cast<int>(d);
    }
  }
  WithMover(dtype, [&](auto mover) {
    using Mover = decltype(mover);
    if (contiguous >= 0) {
      BlockedTransposeImpl<Mover>(static_cast<const char*>(src), merged_sizes, merged_strides,
                                  contiguous, static_cast<char*>(dst));
    } else {
      StridedCopyImpl<Mover>(static_cast<const char*>(src), merged_sizes, merged_strides,
                             static_cast<char*>(dst));
    }
  });
}

void FillElements(DataType dtype, const void* value, int64_t n, void* dst) {
  WithMover(dtype, [&](auto mover) {
    using Mover = decltype(mover);
    const char* v = static_cast<const char*>(value);
    char* out = static_cast<char*>(dst);
    for (int64_t i = 0; i < n; ++i, out += Mover::kSize) Mover::One(v, out);
  });
}

void GatherRows(DataType dtype, const void* src, int64_t batch, int64_t outer, int64_t limit,
                int64_t inner, const int64_t* indices, int64_t n, void* dst) {
  WithMover(dtype, [&](auto mover) {
    using Mover = decltype(mover);
    const int64_t block = inner * Mover::kSize;
    char* out = static_cast<char*>(dst);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t* ix = indices + b * n;
      for (int64_t o = 0; o < outer; ++o) {
        const char* base = static_cast<const char*>(src) + (b * outer + o) * limit * block;
        if (inner == 1) {
          for (int64_t j = 0; j < n; ++j, out += block) Mover::One(base + ix[j] * block, out);
        } else {
          for (int64_t j = 0; j < n; ++j, out += block)
            Mover::Run(base + ix[j] * block, inner, out);
        }
      }
    }
  });
}

void ConcatRows(DataType dtype, absl::Span<const void* const> srcs,
                absl::Span<const int64_t> chunks, int64_t rows, void* dst) {
  DF_CHECK(srcs.size() == chunks.size());
  WithMover(dtype, [&](auto mover) {
    using Mover = decltype(mover);
    char* out = static_cast<char*>(dst);
    for (int64_t r = 0; r < rows; ++r) {
      for (size_t i = 0; i < srcs.size(); ++i) {
        const int64_t n = chunks[i];
        if (n == 0) continue;
        Mover::Run(static_cast<const char*>(srcs[i]) + r * n * Mover::kSize, n, out);
        out += n * Mover::kSize;
      }
    }
  });
}

void SplitRows(DataType dtype, const void* src, absl::Span<void* const> dsts,
               absl::Span<const int64_t> chunks, int64_t rows) {
  DF_CHECK(dsts.size() == chunks.size());
  WithMover(dtype, [&](auto mover) {
    using Mover = decltype(mover);
    const char* in = static_cast<const char*>(src);
    for (int64_t r = 0; r < rows; ++r) {
      for (size_t i = 0; i < dsts.size(); ++i) {
        const int64_t n = chunks[i];
        if (n == 0) continue;
        Mover::Run(in, n, static_cast<char*>(dsts[i]) + r * n * Mover::kSize);
        in += n * Mover::kSize;
      }
    }
  });
}

}  // namespace distflow
