// MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad on CPU, NHWC, for float and
// double. Windows are clipped to the input (SAME padding adds no values):
// a max is over the window's elements inside the input, a mean divides by
// their count, as TensorFlow does. MaxPoolGrad routes each output's
// gradient to the first maximum of its window (row-major order), found
// again from orig_input. Work splits over images (gradients) or output rows
// (forward) on the intra-op pool.
#include <algorithm>
#include <limits>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/nn_kernel_util.h"
#include "distflow/kernels/window_geometry.h"

namespace distflow {
namespace {

// The window of output (oh, ow), clipped to the input: rows [r0, r1),
// columns [c0, c1).
struct Window {
  int64_t r0, r1, c0, c1;
  int64_t count() const { return (r1 - r0) * (c1 - c0); }
};

Window WindowAt(const WindowGeometry& g, int64_t oh, int64_t ow) {
  const int64_t r = oh * g.stride_rows - g.pad_top;
  const int64_t c = ow * g.stride_cols - g.pad_left;
  return Window{std::max<int64_t>(r, 0), std::min(r + g.window_rows, g.in_rows),
                std::max<int64_t>(c, 0), std::min(c + g.window_cols, g.in_cols)};
}

class PoolOpBase : public OpKernel {
 public:
  explicit PoolOpBase(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadWindowAttrs(ctx, /*pooling=*/true, &attrs_));
  }

 protected:
  absl::Status Geometry(const TensorShape& input, WindowGeometry* g) const {
    return ComputeWindowGeometry(name(), input, attrs_, attrs_.window_rows, attrs_.window_cols, g);
  }
  // InvalidArgument unless `t` is [batch, out_rows, out_cols, depth] of `g`.
  absl::Status CheckOutputShaped(const WindowGeometry& g, const Tensor& t, const char* what) const {
    const TensorShape want({g.batch, g.out_rows, g.out_cols, g.depth});
    if (t.shape() == want) return absl::OkStatus();
    return errors::InvalidArgument("node '", name(), "': ", what, " has shape ",
                                   t.shape().DebugString(), ", expected ", want.DebugString());
  }

  WindowAttrs attrs_;
};

template <typename T>
class MaxPoolOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    WindowGeometry g;
    OP_REQUIRES_OK(ctx, Geometry(in.shape(), &g));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, TensorShape({g.batch, g.out_rows, g.out_cols, g.depth}), &out));
    const T* x = in.base<T>();
    T* y = out->base<T>();
    nn::ParallelFor(ctx, g.batch * g.out_rows, g.out_cols * g.depth * g.window_rows * g.window_cols,
                    [&](int64_t lo, int64_t hi) {
                      for (int64_t i = lo; i < hi; ++i) {
                        const int64_t b = i / g.out_rows, oh = i % g.out_rows;
                        for (int64_t ow = 0; ow < g.out_cols; ++ow) {
                          const Window w = WindowAt(g, oh, ow);
                          T* dst = y + (i * g.out_cols + ow) * g.depth;
                          std::fill(dst, dst + g.depth, std::numeric_limits<T>::lowest());
                          for (int64_t r = w.r0; r < w.r1; ++r) {
                            for (int64_t c = w.c0; c < w.c1; ++c) {
                              const T* src = x + ((b * g.in_rows + r) * g.in_cols + c) * g.depth;
                              for (int64_t d = 0; d < g.depth; ++d)
                                dst[d] = std::max(dst[d], src[d]);
                            }
                          }
                        }
                      }
                    });
  }
};

template <typename T>
class MaxPoolGradOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    WindowGeometry g;
    OP_REQUIRES_OK(ctx, Geometry(in.shape(), &g));
    OP_REQUIRES_OK(ctx, CheckOutputShaped(g, ctx->input(1), "orig_output"));
    OP_REQUIRES_OK(ctx, CheckOutputShaped(g, grad, "grad"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    const T* x = in.base<T>();
    const T* dy = grad.base<T>();
    T* dx = out->base<T>();
    std::fill(dx, dx + out->NumElements(), T(0));
    // One image per unit: windows of one image overlap, of two never do.
    nn::ParallelFor(ctx, g.batch, g.out_rows * g.out_cols * g.depth * g.window_rows * g.window_cols,
                    [&](int64_t lo, int64_t hi) {
                      std::vector<int64_t> argmax(g.depth);
                      for (int64_t b = lo; b < hi; ++b) {
                        for (int64_t oh = 0; oh < g.out_rows; ++oh) {
                          for (int64_t ow = 0; ow < g.out_cols; ++ow) {
                            const Window w = WindowAt(g, oh, ow);
                            std::fill(argmax.begin(), argmax.end(), -1);
                            for (int64_t r = w.r0; r < w.r1; ++r) {
                              for (int64_t c = w.c0; c < w.c1; ++c) {
                                const int64_t at = ((b * g.in_rows + r) * g.in_cols + c) * g.depth;
                                for (int64_t d = 0; d < g.depth; ++d) {
                                  if (argmax[d] < 0 || x[at + d] > x[argmax[d]]) argmax[d] = at + d;
                                }
                              }
                            }
                            const T* g_row =
                                dy + ((b * g.out_rows + oh) * g.out_cols + ow) * g.depth;
                            for (int64_t d = 0; d < g.depth; ++d) {
                              if (argmax[d] >= 0) dx[argmax[d]] += g_row[d];
                            }
                          }
                        }
                      }
                    });
  }
};

template <typename T>
class AvgPoolOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    WindowGeometry g;
    OP_REQUIRES_OK(ctx, Geometry(in.shape(), &g));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, TensorShape({g.batch, g.out_rows, g.out_cols, g.depth}), &out));
    const T* x = in.base<T>();
    T* y = out->base<T>();
    nn::ParallelFor(ctx, g.batch * g.out_rows, g.out_cols * g.depth * g.window_rows * g.window_cols,
                    [&](int64_t lo, int64_t hi) {
                      for (int64_t i = lo; i < hi; ++i) {
                        const int64_t b = i / g.out_rows, oh = i % g.out_rows;
                        for (int64_t ow = 0; ow < g.out_cols; ++ow) {
                          const Window w = WindowAt(g, oh, ow);
                          T* dst = y + (i * g.out_cols + ow) * g.depth;
                          std::fill(dst, dst + g.depth, T(0));
                          for (int64_t r = w.r0; r < w.r1; ++r) {
                            for (int64_t c = w.c0; c < w.c1; ++c) {
                              const T* src = x + ((b * g.in_rows + r) * g.in_cols + c) * g.depth;
                              for (int64_t d = 0; d < g.depth; ++d) dst[d] += src[d];
                            }
                          }
                          const T scale = T(1) / static_cast<T>(std::max<int64_t>(w.count(), 1));
                          for (int64_t d = 0; d < g.depth; ++d) dst[d] *= scale;
                        }
                      }
                    });
  }
};

template <typename T>
class AvgPoolGradOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;

  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(0), "orig_input_shape", &dims));
    TensorShape in_shape;
    for (int64_t d : dims) {
      OP_REQUIRES(
          ctx, d >= 0,
          errors::InvalidArgument("node '", name(), "': orig_input_shape has a negative size ", d));
    }
    OP_REQUIRES_OK(ctx, TensorShape::BuildTensorShape(dims, &in_shape));
    const Tensor& grad = ctx->input(1);
    WindowGeometry g;
    OP_REQUIRES_OK(ctx, Geometry(in_shape, &g));
    OP_REQUIRES_OK(ctx, CheckOutputShaped(g, grad, "grad"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in_shape, &out));
    const T* dy = grad.base<T>();
    T* dx = out->base<T>();
    std::fill(dx, dx + out->NumElements(), T(0));
    nn::ParallelFor(ctx, g.batch, g.out_rows * g.out_cols * g.depth * g.window_rows * g.window_cols,
                    [&](int64_t lo, int64_t hi) {
                      for (int64_t b = lo; b < hi; ++b) {
                        for (int64_t oh = 0; oh < g.out_rows; ++oh) {
                          for (int64_t ow = 0; ow < g.out_cols; ++ow) {
                            const Window w = WindowAt(g, oh, ow);
                            const T scale = T(1) / static_cast<T>(std::max<int64_t>(w.count(), 1));
                            const T* g_row =
                                dy + ((b * g.out_rows + oh) * g.out_cols + ow) * g.depth;
                            for (int64_t r = w.r0; r < w.r1; ++r) {
                              for (int64_t c = w.c0; c < w.c1; ++c) {
                                T* dst = dx + ((b * g.in_rows + r) * g.in_cols + c) * g.depth;
                                for (int64_t d = 0; d < g.depth; ++d) dst[d] += g_row[d] * scale;
                              }
                            }
                          }
                        }
                      }
                    });
  }
};

#define DF_REGISTER_POOL(T)                                                              \
  REGISTER_KERNEL_BUILDER(Name("MaxPool").Device(kDeviceCpu).TypeConstraint<T>("T"),     \
                          MaxPoolOp<T>);                                                 \
  REGISTER_KERNEL_BUILDER(Name("MaxPoolGrad").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                          MaxPoolGradOp<T>);                                             \
  REGISTER_KERNEL_BUILDER(Name("AvgPool").Device(kDeviceCpu).TypeConstraint<T>("T"),     \
                          AvgPoolOp<T>);                                                 \
  REGISTER_KERNEL_BUILDER(Name("AvgPoolGrad").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                          AvgPoolGradOp<T>);
DF_REGISTER_POOL(float)
DF_REGISTER_POOL(double)
#undef DF_REGISTER_POOL

}  // namespace
}  // namespace distflow
