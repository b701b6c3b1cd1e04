// Kernels for the reductions Sum, Mean, Prod, Max, Min (numbers) and All,
// Any (bool) over the axes given by reduction_indices (a scalar or vector of
// int32/int64; negative axes count from the end). An axis out of range or
// given twice is InvalidArgument naming it. Reducing over nothing gives the
// identity: Sum 0, Prod 1, Max the lowest value (-inf for floats), Min the
// highest (+inf), All true, Any false, and Mean NaN for floats (0 for ints).
// Max and Min propagate NaN. bfloat16 reduces in float.
// GCC 12 reports false "may be used uninitialized" warnings inside the
// AVX-512 intrinsics that Eigen's vectorized reductions inline; the pragma
// must precede every include to cover them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/cwise_ops.h"

namespace distflow {
namespace {

// The input viewed as collapsed dims: dims of size 1 dropped, neighbours
// that are both reduced or both kept merged.
struct ReductionLayout {
  TensorShape output_shape;
  DimVector dims;
  absl::InlinedVector<bool, 8> reduced;
  // Input elements that fold into each output element.
  int64_t reduce_count = 1;
};

absl::Status MakeReductionLayout(const TensorShape& input, const Tensor& axes, bool keep_dims,
                                 ReductionLayout* layout) {
  if (axes.dims() > 1) {
    return errors::InvalidArgument("reduction_indices must be a scalar or vector, got shape ",
                                   axes.shape().DebugString());
  }
  std::vector<int64_t> values;
  if (axes.dtype() == DT_INT32) {
    for (int32_t v : axes.flat<int32_t>()) values.push_back(v);
  } else {
    for (int64_t v : axes.flat<int64_t>()) values.push_back(v);
  }
  const int rank = input.dims();
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : values) {
    if (axis < -rank || axis >= rank) {
      return errors::InvalidArgument("Invalid reduction dimension ", axis, " for input with ", rank,
                                     " dimensions");
    }
    const int64_t d = axis < 0 ? axis + rank : axis;
    if (reduced[d]) {
      return errors::InvalidArgument("Duplicate reduction dimension ", axis, " for input with ",
                                     rank, " dimensions");
    }
    reduced[d] = true;
  }
  layout->output_shape = TensorShape();
  layout->dims.clear();
  layout->reduced.clear();
  layout->reduce_count = 1;
  for (int d = 0; d < rank; ++d) {
    const int64_t size = input.dim_size(d);
    if (reduced[d]) {
      layout->reduce_count *= size;
      if (keep_dims) layout->output_shape.AddDim(1);
    } else {
      layout->output_shape.AddDim(size);
    }
    if (size == 1) continue;
    if (!layout->dims.empty() && layout->reduced.back() == reduced[d]) {
      layout->dims.back() *= size;
    } else {
      layout->dims.push_back(size);
      layout->reduced.push_back(reduced[d]);
    }
  }
  return absl::OkStatus();
}

template <typename T>
using ConstVec = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

struct SumReducer {
  template <typename T>
  static T Identity() {
    return T(0);
  }
  template <typename T>
  static T Reduce(const T* p, int64_t n) {
    return ConstVec<T>(p, n).sum();
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a + b;
  }
};

struct ProdReducer {
  template <typename T>
  static T Identity() {
    return T(1);
  }
  template <typename T>
  static T Reduce(const T* p, int64_t n) {
    return ConstVec<T>(p, n).prod();
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a * b;
  }
};

struct MaxReducer {
  template <typename T>
  static T Identity() {
    if constexpr (std::is_floating_point_v<T>) {
      return -std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::lowest();
    }
  }
  template <typename T>
  static T Reduce(const T* p, int64_t n) {
    return ConstVec<T>(p, n).template maxCoeff<Eigen::PropagateNaN>();
  }
  template <typename T>
  static T Combine(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return a + b;
    }
    return a > b ? a : b;
  }
};

struct MinReducer {
  template <typename T>
  static T Identity() {
    if constexpr (std::is_floating_point_v<T>) {
      return std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::max();
    }
  }
  template <typename T>
  static T Reduce(const T* p, int64_t n) {
    return ConstVec<T>(p, n).template minCoeff<Eigen::PropagateNaN>();
  }
  template <typename T>
  static T Combine(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return a + b;
    }
    return a < b ? a : b;
  }
};

struct AllReducer {
  template <typename T>
  static T Identity() {
    return true;
  }
  template <typename T>
  static T Reduce(const T* p, int64_t n) {
    return ConstVec<T>(p, n).all();
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a && b;
  }
};

struct AnyReducer {
  template <typename T>
  static T Identity() {
    return false;
  }
  template <typename T>
  static T Reduce(const T* p, int64_t n) {
    return ConstVec<T>(p, n).any();
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a || b;
  }
};

// Folds the input elements whose first collapsed index is in [begin, end)
// into acc (one slot per output element).
// REQUIRES: layout.dims.size() >= 1 and some dim is reduced.
template <typename R, typename T>
void Accumulate(const ReductionLayout& layout, const T* in, T* acc, int64_t begin, int64_t end) {
  const int rank = static_cast<int>(layout.dims.size());
  if (rank == 1) {
    acc[0] = R::Combine(acc[0], R::template Reduce<T>(in + begin, end - begin));
    return;
  }
  DimVector in_stride(rank), out_stride(rank);
  int64_t in_acc = 1, out_acc = 1;
  for (int d = rank - 1; d >= 0; --d) {
    in_stride[d] = in_acc;
    in_acc *= layout.dims[d];
    out_stride[d] = layout.reduced[d] ? 0 : out_acc;
    if (!layout.reduced[d]) out_acc *= layout.dims[d];
  }
  const int64_t inner = layout.dims[rank - 1];
  const bool inner_reduced = layout.reduced[rank - 1];
  DimVector index(rank - 1, 0);
  index[0] = begin;
  int64_t in_off = begin * in_stride[0];
  int64_t out_off = begin * out_stride[0];
  while (index[0] < end) {
    const T* p = in + in_off;
    T* a = acc + out_off;
    if (inner_reduced) {
      a[0] = R::Combine(a[0], R::template Reduce<T>(p, inner));
    } else {
      for (int64_t j = 0; j < inner; ++j) a[j] = R::Combine(a[j], p[j]);
    }
    // Odometer increment over dims [0, rank - 1).
    for (int d = rank - 2; d >= 0; --d) {
      ++index[d];
      in_off += in_stride[d];
      out_off += out_stride[d];
      if (d == 0 || index[d] < layout.dims[d]) break;
      in_off -= in_stride[d] * layout.dims[d];
      out_off -= out_stride[d] * layout.dims[d];
      index[d] = 0;
    }
  }
}

// out[i] = reduction of the input elements mapping to output i.
template <typename R, typename T>
void Reduce(OpKernelContext* ctx, const ReductionLayout& layout, const T* in, int64_t in_size,
            T* out, int64_t out_size) {
  std::fill(out, out + out_size, R::template Identity<T>());
  if (in_size == 0) return;
  const int64_t d0 = layout.dims[0];
  const int64_t slab = in_size / d0;
  if (!layout.reduced[0]) {
    // Shards over the first dim write disjoint outputs.
    ShardElementwise(ctx, d0, slab, [&](int64_t begin, int64_t end) {
      Accumulate<R>(layout, in, out, begin, end);
    });
    return;
  }
  // The first dim is reduced: shards fold into private partials, combined in
  // shard order so results do not depend on timing.
  ThreadPool* pool = ctx->intra_op_threadpool();
  constexpr int64_t kMinElementsPerChunk = 32 * 1024;
  int64_t chunks = pool == nullptr ? 1 : pool->NumThreads();
  chunks = std::min({chunks, d0, in_size / kMinElementsPerChunk});
  if (chunks <= 1 || out_size * chunks > in_size) {
    Accumulate<R>(layout, in, out, 0, d0);
    return;
  }
  // Not std::vector: vector<bool> has no element addresses.
  std::unique_ptr<T[]> partials(new T[out_size * chunks]);
  std::fill(partials.get(), partials.get() + out_size * chunks, R::template Identity<T>());
  const int64_t per_chunk = (d0 + chunks - 1) / chunks;
  pool->ParallelFor(chunks, std::numeric_limits<int32_t>::max(),
                    [&](int64_t c_begin, int64_t c_end) {
                      for (int64_t c = c_begin; c < c_end; ++c) {
                        const int64_t b = c * per_chunk;
                        const int64_t e = std::min(d0, b + per_chunk);
                        if (b < e) {
                          Accumulate<R>(layout, in, &partials[c * out_size], b, e);
                        }
                      }
                    });
  for (int64_t c = 0; c < chunks; ++c) {
    for (int64_t i = 0; i < out_size; ++i) {
      out[i] = R::Combine(out[i], partials[c * out_size + i]);
    }
  }
}

template <typename T, typename R, bool kMean = false>
class ReductionOp : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ReductionLayout layout;
    OP_REQUIRES_OK(ctx, MakeReductionLayout(input.shape(), ctx->input(1), keep_dims_, &layout));
    const bool reduces =
        std::find(layout.reduced.begin(), layout.reduced.end(), true) != layout.reduced.end();
    if (!reduces && input.NumElements() > 0) {
      // Only size-1 dims are reduced: the output is the input, reshaped.
      Tensor out;
      out.CopyFrom(input, layout.output_shape);
      ctx->set_output(0, out);
      return;
    }
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, layout.output_shape, &output));
    const int64_t out_size = output->NumElements();
    if (out_size == 0) return;
    if constexpr (std::is_same_v<T, bfloat16>) {
      std::vector<float> in(input.NumElements()), out(out_size);
      const bfloat16* src = input.base<bfloat16>();
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(src[i]);
      Run<float>(ctx, layout, in.data(), in.size(), out.data(), out_size);
      bfloat16* dst = output->base<bfloat16>();
      for (int64_t i = 0; i < out_size; ++i) dst[i] = bfloat16(out[i]);
    } else {
      Run<T>(ctx, layout, input.base<T>(), input.NumElements(), output->base<T>(), out_size);
    }
  }

 private:
  template <typename C>
  static void Run(OpKernelContext* ctx, const ReductionLayout& layout, const C* in, int64_t in_size,
                  C* out, int64_t out_size) {
    Reduce<R>(ctx, layout, in, in_size, out, out_size);
    if constexpr (kMean) {
      if constexpr (std::is_floating_point_v<C>) {
        const C scale = C(1) / static_cast<C>(layout.reduce_count);
        const C nan = std::numeric_limits<C>::quiet_NaN();
        for (int64_t i = 0; i < out_size; ++i) {
          out[i] = layout.reduce_count == 0 ? nan : out[i] * scale;
        }
      } else if (layout.reduce_count > 0) {
        const C count = static_cast<C>(layout.reduce_count);
        for (int64_t i = 0; i < out_size; ++i) out[i] /= count;
      }
    }
  }

  bool keep_dims_ = false;
};

#define DF_REGISTER_REDUCTION(name, T, ...)                                  \
  REGISTER_KERNEL_BUILDER(Name(name)                                         \
                              .Device(kDeviceCpu)                            \
                              .TypeConstraint<T>("T")                        \
                              .TypeConstraint("Tidx", {DT_INT32, DT_INT64}), \
                          ReductionOp<T, __VA_ARGS__>)
#define DF_REGISTER_REDUCTION_NUMBERS(name, ...)     \
  DF_REGISTER_REDUCTION(name, float, __VA_ARGS__);   \
  DF_REGISTER_REDUCTION(name, double, __VA_ARGS__);  \
  DF_REGISTER_REDUCTION(name, int32_t, __VA_ARGS__); \
  DF_REGISTER_REDUCTION(name, int64_t, __VA_ARGS__); \
  DF_REGISTER_REDUCTION(name, bfloat16, __VA_ARGS__)

DF_REGISTER_REDUCTION_NUMBERS("Sum", SumReducer);
DF_REGISTER_REDUCTION_NUMBERS("Mean", SumReducer, true);
DF_REGISTER_REDUCTION_NUMBERS("Prod", ProdReducer);
DF_REGISTER_REDUCTION_NUMBERS("Max", MaxReducer);
DF_REGISTER_REDUCTION_NUMBERS("Min", MinReducer);
REGISTER_KERNEL_BUILDER(Name("All").Device(kDeviceCpu).TypeConstraint("Tidx", {DT_INT32, DT_INT64}),
                        ReductionOp<bool, AllReducer>);
REGISTER_KERNEL_BUILDER(Name("Any").Device(kDeviceCpu).TypeConstraint("Tidx", {DT_INT32, DT_INT64}),
                        ReductionOp<bool, AnyReducer>);

#undef DF_REGISTER_REDUCTION_NUMBERS
#undef DF_REGISTER_REDUCTION

}  // namespace
}  // namespace distflow
