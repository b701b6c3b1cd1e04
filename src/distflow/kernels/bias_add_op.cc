// CPU kernels for BiasAdd (adds a 1-D bias along the channel dimension: the
// last one for NHWC, dimension 1 for NCHW) and BiasAddGrad (sums the incoming
// gradient over every other dimension), for float, double and bfloat16.
// BiasAddGrad accumulates in double, in a fixed order.
#include <string>
#include <vector>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/nn_kernel_util.h"

namespace distflow {
namespace {

// Reads the data_format attr: true for NCHW, false for NHWC.
bool ReadIsNchw(OpKernelConstruction* ctx) {
  std::string data_format;
  absl::Status s = ctx->GetAttr("data_format", &data_format);
  if (s.ok() && data_format != "NHWC" && data_format != "NCHW") {
    s = errors::InvalidArgument("data_format must be NHWC or NCHW, got '", data_format, "'");
  }
  ctx->SetStatus(s);
  return data_format == "NCHW";
}

// A tensor of rank >= 2 viewed as [outer, channels, inner] around its channel
// dimension.
struct ChannelView {
  int64_t outer = 0, channels = 0, inner = 0;
};

ChannelView ViewAroundChannel(const TensorShape& shape, bool nchw) {
  const int channel = nchw ? 1 : shape.dims() - 1;
  ChannelView v;
  v.outer = 1;
  v.inner = 1;
  for (int d = 0; d < channel; ++d) v.outer *= shape.dim_size(d);
  v.channels = shape.dim_size(channel);
  for (int d = channel + 1; d < shape.dims(); ++d) v.inner *= shape.dim_size(d);
  return v;
}

template <typename T>
class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* ctx) : OpKernel(ctx), nchw_(ReadIsNchw(ctx)) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    OP_REQUIRES(ctx, value.dims() >= 2,
                errors::InvalidArgument("BiasAdd value must be at least 2-D, got shape ",
                                        value.shape().DebugString()));
    OP_REQUIRES(ctx, bias.dims() == 1,
                errors::InvalidArgument("BiasAdd bias must be 1-D, got shape ",
                                        bias.shape().DebugString()));
    const ChannelView v = ViewAroundChannel(value.shape(), nchw_);
    OP_REQUIRES(ctx, bias.dim_size(0) == v.channels,
                errors::InvalidArgument("BiasAdd bias length must match the channel dimension (",
                                        nchw_ ? 1 : value.dims() - 1, ") of value for data_format ",
                                        nchw_ ? "NCHW" : "NHWC", ": bias shape ",
                                        bias.shape().DebugString(), " vs. value shape ",
                                        value.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, value.shape(), &out));
    const T* x = value.base<T>();
    const T* b = bias.base<T>();
    T* y = out->base<T>();
    const int64_t channels = v.channels, inner = v.inner;
    // One unit is one (outer, channel) pair: `inner` elements sharing a bias
    // value (inner == 1 for NHWC).
    nn::ParallelFor(ctx, v.outer * channels, inner, [=](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const T bias_value = b[u % channels];
        const int64_t base = u * inner;
        for (int64_t k = 0; k < inner; ++k) {
          y[base + k] = x[base + k] + bias_value;
        }
      }
    });
  }

 private:
  const bool nchw_;
};

template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction* ctx) : OpKernel(ctx), nchw_(ReadIsNchw(ctx)) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    OP_REQUIRES(ctx, grad.dims() >= 2,
                errors::InvalidArgument("BiasAddGrad out_backprop must be at least 2-D, got shape ",
                                        grad.shape().DebugString()));
    const ChannelView v = ViewAroundChannel(grad.shape(), nchw_);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({v.channels}), &out));
    std::vector<double> sums(v.channels, 0.0);
    const T* g = grad.base<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t c = 0; c < v.channels; ++c) {
        const T* run = g + (o * v.channels + c) * v.inner;
        double s = 0;
        for (int64_t k = 0; k < v.inner; ++k) s += static_cast<double>(run[k]);
        sums[c] += s;
      }
    }
    T* y = out->base<T>();
    for (int64_t c = 0; c < v.channels; ++c) y[c] = static_cast<T>(sums[c]);
  }

 private:
  const bool nchw_;
};

#define DF_REGISTER_BIAS_ADD(T)                                                          \
  REGISTER_KERNEL_BUILDER(Name("BiasAdd").Device(kDeviceCpu).TypeConstraint<T>("T"),     \
                          BiasAddOp<T>);                                                 \
  REGISTER_KERNEL_BUILDER(Name("BiasAddGrad").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                          BiasAddGradOp<T>)

DF_REGISTER_BIAS_ADD(float);
DF_REGISTER_BIAS_ADD(double);
DF_REGISTER_BIAS_ADD(bfloat16);

#undef DF_REGISTER_BIAS_ADD

}  // namespace
}  // namespace distflow
