// Conv2D and its backprops on CPU, NHWC, for float and double, as im2col +
// GEMM: the input patches of a group of images form a [rows = images *
// out_rows * out_cols, cols = fh * fw * in_depth] matrix, which the filter
// ([fh * fw * in_depth, out_depth] row-major) multiplies. The patch matrix
// of one group is bounded (kMaxPatchBytes) so memory stays small whatever
// the batch; patch extraction and scattering split over images on the
// intra-op pool and the GEMMs split their rows (kernels/matmul.h).
//   Conv2D:               out = patches * filter
//   Conv2DBackpropInput:  d_patches = d_out * filter^T, scattered back
//   Conv2DBackpropFilter: d_filter = sum over groups of patches^T * d_out
#include <algorithm>
#include <cstring>
#include <vector>

#include "distflow/core/checked_math.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/matmul.h"
#include "distflow/kernels/nn_kernel_util.h"
#include "distflow/kernels/window_geometry.h"

namespace distflow {
namespace {

constexpr int64_t kMaxPatchBytes = 64 << 20;

// Shapes of one convolution, checked.
struct ConvShape {
  WindowGeometry g;
  int64_t out_depth;
  int64_t patch_size;  // fh * fw * in_depth
  int64_t image_rows;  // out_rows * out_cols: patch rows per image
};

absl::Status MakeConvShape(const std::string& node, const TensorShape& input,
                           const TensorShape& filter, const WindowAttrs& attrs, ConvShape* out) {
  if (filter.dims() != 4) {
    return errors::InvalidArgument("node '", node,
                                   "': filter must be 4-D [rows, cols, in_depth, out_depth], "
                                   "got shape ",
                                   filter.DebugString());
  }
  DF_RETURN_IF_ERROR(
      ComputeWindowGeometry(node, input, attrs, filter.dim_size(0), filter.dim_size(1), &out->g));
  if (filter.dim_size(2) != out->g.depth) {
    return errors::InvalidArgument("node '", node, "': input depth ", out->g.depth,
                                   " does not match the filter's in_depth ", filter.dim_size(2));
  }
  out->out_depth = filter.dim_size(3);
  out->patch_size = filter.dim_size(0) * filter.dim_size(1) * filter.dim_size(2);
  out->image_rows = out->g.out_rows * out->g.out_cols;
  return absl::OkStatus();
}

// Images per group so that a group's patch matrix stays under kMaxPatchBytes.
// On overflow one image per group: allocating its patches then fails with
// ResourceExhausted.
template <typename T>
int64_t ImagesPerGroup(const ConvShape& s) {
  int64_t elements, bytes;
  if (!MultiplyWithoutOverflow<int64_t>(s.image_rows, s.patch_size, &elements) ||
      !MultiplyWithoutOverflow<int64_t>(elements, sizeof(T), &bytes) || bytes == 0) {
    return 1;
  }
  return std::max<int64_t>(1, kMaxPatchBytes / bytes);
}

// Fills `patches` with the patch rows of images [first, first + count).
template <typename T>
void Im2Col(OpKernelContext* ctx, const ConvShape& s, const T* input, int64_t first, int64_t count,
            T* patches) {
  const WindowGeometry& g = s.g;
  const int64_t run = g.window_cols * g.depth;
  nn::ParallelFor(ctx, count * g.out_rows, s.patch_size * g.out_cols, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t b = first + i / g.out_rows, oh = i % g.out_rows;
      for (int64_t ow = 0; ow < g.out_cols; ++ow) {
        T* row = patches + ((i * g.out_cols) + ow) * s.patch_size;
        const int64_t c0 = ow * g.stride_cols - g.pad_left;
        for (int64_t kh = 0; kh < g.window_rows; ++kh) {
          T* dst = row + kh * run;
          const int64_t r = oh * g.stride_rows - g.pad_top + kh;
          if (r < 0 || r >= g.in_rows) {
            std::fill(dst, dst + run, T(0));
            continue;
          }
          const T* src_row = input + ((b * g.in_rows + r) * g.in_cols) * g.depth;
          if (c0 >= 0 && c0 + g.window_cols <= g.in_cols) {
            std::memcpy(dst, src_row + c0 * g.depth, run * sizeof(T));
            continue;
          }
          for (int64_t kw = 0; kw < g.window_cols; ++kw) {
            const int64_t c = c0 + kw;
            T* d = dst + kw * g.depth;
            if (c < 0 || c >= g.in_cols) {
              std::fill(d, d + g.depth, T(0));
            } else {
              std::memcpy(d, src_row + c * g.depth, g.depth * sizeof(T));
            }
          }
        }
      }
    }
  });
}

// Adds the patch rows of images [first, first + count) into `input`'s grad.
template <typename T>
void Col2Im(OpKernelContext* ctx, const ConvShape& s, const T* patches, int64_t first,
            int64_t count, T* input) {
  const WindowGeometry& g = s.g;
  // One image per unit: patches of one image overlap, of two never do.
  nn::ParallelFor(ctx, count, s.image_rows * s.patch_size, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t b = first + i;
      for (int64_t oh = 0; oh < g.out_rows; ++oh) {
        for (int64_t ow = 0; ow < g.out_cols; ++ow) {
          const T* row = patches + ((i * g.out_rows + oh) * g.out_cols + ow) * s.patch_size;
          for (int64_t kh = 0; kh < g.window_rows; ++kh) {
            const int64_t r = oh * g.stride_rows - g.pad_top + kh;
            if (r < 0 || r >= g.in_rows) continue;
            for (int64_t kw = 0; kw < g.window_cols; ++kw) {
              const int64_t c = ow * g.stride_cols - g.pad_left + kw;
              if (c < 0 || c >= g.in_cols) continue;
              T* dst = input + ((b * g.in_rows + r) * g.in_cols + c) * g.depth;
              const T* src = row + (kh * g.window_cols + kw) * g.depth;
              for (int64_t d = 0; d < g.depth; ++d) dst[d] += src[d];
            }
          }
        }
      }
    }
  });
}

// A shape from int32 vector input `index` (input_sizes, filter_sizes).
absl::Status ShapeInput(OpKernelContext* ctx, int index, const char* name, TensorShape* out) {
  std::vector<int64_t> dims;
  DF_RETURN_IF_ERROR(IndexVector(ctx->input(index), name, &dims));
  for (int64_t d : dims) {
    if (d < 0) {
      return errors::InvalidArgument("node '", ctx->op_kernel().name(), "': ", name,
                                     " has a negative size ", d);
    }
  }
  return TensorShape::BuildTensorShape(dims, out);
}

class ConvOpBase : public OpKernel {
 public:
  explicit ConvOpBase(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadWindowAttrs(ctx, /*pooling=*/false, &attrs_));
  }

 protected:
  WindowAttrs attrs_;
};

template <typename T>
class Conv2DOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    ConvShape s;
    OP_REQUIRES_OK(ctx, MakeConvShape(name(), input.shape(), filter.shape(), attrs_, &s));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx,
                   ctx->allocate_output(
                       0, TensorShape({s.g.batch, s.g.out_rows, s.g.out_cols, s.out_depth}), &out));
    if (out->NumElements() == 0) return;
    if (s.patch_size == 0) {
      std::fill(out->base<T>(), out->base<T>() + out->NumElements(), T(0));
      return;
    }
    const int64_t group = std::min(s.g.batch, ImagesPerGroup<T>(s));
    Tensor patches;
    OP_REQUIRES_OK(ctx,
                   ctx->allocate_temp(DataTypeToEnum<T>::value,
                                      TensorShape({group * s.image_rows, s.patch_size}), &patches));
    for (int64_t first = 0; first < s.g.batch; first += group) {
      const int64_t count = std::min(group, s.g.batch - first);
      Im2Col(ctx, s, input.base<T>(), first, count, patches.base<T>());
      MatMulRowMajor<T>(ctx->intra_op_threadpool(), patches.base<T>(), false, filter.base<T>(),
                        false, count * s.image_rows, s.patch_size, s.out_depth,
                        out->base<T>() + first * s.image_rows * s.out_depth);
    }
  }
};

template <typename T>
class Conv2DBackpropInputOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext* ctx) override {
    TensorShape input_shape;
    OP_REQUIRES_OK(ctx, ShapeInput(ctx, 0, "input_sizes", &input_shape));
    const Tensor& filter = ctx->input(1);
    const Tensor& d_out = ctx->input(2);
    ConvShape s;
    OP_REQUIRES_OK(ctx, MakeConvShape(name(), input_shape, filter.shape(), attrs_, &s));
    const TensorShape want({s.g.batch, s.g.out_rows, s.g.out_cols, s.out_depth});
    OP_REQUIRES(
        ctx, d_out.shape() == want,
        errors::InvalidArgument("node '", name(), "': out_backprop has shape ",
                                d_out.shape().DebugString(), ", expected ", want.DebugString()));
    Tensor* d_in = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input_shape, &d_in));
    std::fill(d_in->base<T>(), d_in->base<T>() + d_in->NumElements(), T(0));
    if (d_out.NumElements() == 0 || s.patch_size == 0) return;
    const int64_t group = std::min(s.g.batch, ImagesPerGroup<T>(s));
    Tensor d_patches;
    OP_REQUIRES_OK(
        ctx, ctx->allocate_temp(DataTypeToEnum<T>::value,
                                TensorShape({group * s.image_rows, s.patch_size}), &d_patches));
    for (int64_t first = 0; first < s.g.batch; first += group) {
      const int64_t count = std::min(group, s.g.batch - first);
      MatMulRowMajor<T>(ctx->intra_op_threadpool(),
                        d_out.base<T>() + first * s.image_rows * s.out_depth, false,
                        filter.base<T>(), true, count * s.image_rows, s.out_depth, s.patch_size,
                        d_patches.base<T>());
      Col2Im(ctx, s, d_patches.base<T>(), first, count, d_in->base<T>());
    }
  }
};

template <typename T>
class Conv2DBackpropFilterOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    TensorShape filter_shape;
    OP_REQUIRES_OK(ctx, ShapeInput(ctx, 1, "filter_sizes", &filter_shape));
    const Tensor& d_out = ctx->input(2);
    ConvShape s;
    OP_REQUIRES_OK(ctx, MakeConvShape(name(), input.shape(), filter_shape, attrs_, &s));
    const TensorShape want({s.g.batch, s.g.out_rows, s.g.out_cols, s.out_depth});
    OP_REQUIRES(
        ctx, d_out.shape() == want,
        errors::InvalidArgument("node '", name(), "': out_backprop has shape ",
                                d_out.shape().DebugString(), ", expected ", want.DebugString()));
    Tensor* d_filter = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, filter_shape, &d_filter));
    T* df = d_filter->base<T>();
    std::fill(df, df + d_filter->NumElements(), T(0));
    if (d_out.NumElements() == 0 || s.patch_size == 0) return;
    const int64_t group = std::min(s.g.batch, ImagesPerGroup<T>(s));
    Tensor patches, partial;
    OP_REQUIRES_OK(ctx,
                   ctx->allocate_temp(DataTypeToEnum<T>::value,
                                      TensorShape({group * s.image_rows, s.patch_size}), &patches));
    OP_REQUIRES_OK(ctx, ctx->allocate_temp(DataTypeToEnum<T>::value, filter_shape, &partial));
    for (int64_t first = 0; first < s.g.batch; first += group) {
      const int64_t count = std::min(group, s.g.batch - first);
      Im2Col(ctx, s, input.base<T>(), first, count, patches.base<T>());
      MatMulRowMajor<T>(ctx->intra_op_threadpool(), patches.base<T>(), true,
                        d_out.base<T>() + first * s.image_rows * s.out_depth, false, s.patch_size,
                        count * s.image_rows, s.out_depth, partial.base<T>());
      const T* p = partial.base<T>();
      for (int64_t i = 0; i < d_filter->NumElements(); ++i) df[i] += p[i];
    }
  }
};

#define DF_REGISTER_CONV(T)                                                                       \
  REGISTER_KERNEL_BUILDER(Name("Conv2D").Device(kDeviceCpu).TypeConstraint<T>("T"), Conv2DOp<T>); \
  REGISTER_KERNEL_BUILDER(Name("Conv2DBackpropInput").Device(kDeviceCpu).TypeConstraint<T>("T"),  \
                          Conv2DBackpropInputOp<T>);                                              \
  REGISTER_KERNEL_BUILDER(Name("Conv2DBackpropFilter").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                          Conv2DBackpropFilterOp<T>);
DF_REGISTER_CONV(float)
DF_REGISTER_CONV(double)
#undef DF_REGISTER_CONV

}  // namespace
}  // namespace distflow
