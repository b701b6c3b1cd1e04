// CPU kernels for SoftmaxCrossEntropyWithLogits (dense label distributions,
// broadcast against the logits like NumPy) and
// SparseSoftmaxCrossEntropyWithLogits (int32/int64 class indices), for float,
// double and bfloat16 (computed in float). Per row of logits x and labels p:
//   loss = sum_j p_j * (logsumexp(x) - x_j),
//   backprop_j = softmax(x)_j - p_j,
// with logsumexp computed after subtracting the row maximum. Labels of 0
// contribute nothing to the loss, even against a logit of -inf.
#include <cmath>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/nn_kernel_util.h"

namespace distflow {
namespace {

// The broadcast size of one dimension, or -1 when the sizes are incompatible.
int64_t BroadcastDim(int64_t a, int64_t b) {
  if (a == b || b == 1) return a;
  if (a == 1) return b;
  return -1;
}

template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  explicit SoftmaxXentOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    using C = nn::ComputeType<T>;
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(ctx, features.dims() == 2 && labels.dims() == 2,
                errors::InvalidArgument("logits and labels must be 2-D [batch, classes], got "
                                        "logits shape ",
                                        features.shape().DebugString(), " and labels shape ",
                                        labels.shape().DebugString()));
    const int64_t batch = BroadcastDim(features.dim_size(0), labels.dim_size(0));
    const int64_t classes = BroadcastDim(features.dim_size(1), labels.dim_size(1));
    OP_REQUIRES(ctx, batch >= 0 && classes >= 0,
                errors::InvalidArgument("logits and labels must have the same shape or broadcast "
                                        "to one, got logits shape ",
                                        features.shape().DebugString(), " and labels shape ",
                                        labels.shape().DebugString()));
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({batch, classes}), &backprop));
    // A broadcast dimension of size 1 is read with stride 0.
    const int64_t f_row = features.dim_size(0) == 1 ? 0 : features.dim_size(1);
    const int64_t f_col = features.dim_size(1) == 1 ? 0 : 1;
    const int64_t l_row = labels.dim_size(0) == 1 ? 0 : labels.dim_size(1);
    const int64_t l_col = labels.dim_size(1) == 1 ? 0 : 1;
    const T* f = features.base<T>();
    const T* l = labels.base<T>();
    T* loss_out = loss->base<T>();
    T* bp = backprop->base<T>();
    nn::ParallelFor(ctx, batch, 50 * classes, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* fr = f + r * f_row;
        const T* lr = l + r * l_row;
        T* bpr = bp + r * classes;
        C max;
        const C log_sum = nn::RowMaxAndLogSumExp(fr, classes, f_col, &max);
        C row_loss = 0;
        for (int64_t j = 0; j < classes; ++j) {
          const C shifted = static_cast<C>(fr[j * f_col]) - max;
          const C label = static_cast<C>(lr[j * l_col]);
          if (label != C(0)) row_loss += label * (log_sum - shifted);
          bpr[j] = static_cast<T>(std::exp(shifted - log_sum) - label);
        }
        loss_out[r] = static_cast<T>(row_loss);
      }
    });
  }
};

template <typename T, typename Index>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  explicit SparseSoftmaxXentOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    using C = nn::ComputeType<T>;
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(
        ctx,
        features.dims() == 2 && labels.dims() == 1 && features.dim_size(0) == labels.dim_size(0),
        errors::InvalidArgument("logits must be [batch, classes] and labels [batch] with "
                                "the same batch, got logits shape ",
                                features.shape().DebugString(), " and labels shape ",
                                labels.shape().DebugString()));
    const int64_t batch = features.dim_size(0);
    const int64_t classes = features.dim_size(1);
    OP_REQUIRES(ctx, classes > 0 || batch == 0,
                errors::InvalidArgument("logits must have at least one class, got logits shape ",
                                        features.shape().DebugString()));
    const Index* label = labels.base<Index>();
    for (int64_t r = 0; r < batch; ++r) {
      OP_REQUIRES(ctx, label[r] >= 0 && label[r] < classes,
                  errors::InvalidArgument("received a label value of ", label[r], " at position ",
                                          r, ", outside the valid range [0, ", classes, ") for ",
                                          classes, " classes"));
    }
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 1, features.shape(), &backprop));
    const T* f = features.base<T>();
    T* loss_out = loss->base<T>();
    T* bp = backprop->base<T>();
    // `bp` may alias `f`: a row's loss is read from the logits before the
    // row's backprop is written.
    nn::ParallelFor(ctx, batch, 40 * classes, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* fr = f + r * classes;
        T* bpr = bp + r * classes;
        C max;
        const C log_sum = nn::RowMaxAndLogSumExp(fr, classes, 1, &max);
        const int64_t target = static_cast<int64_t>(label[r]);
        loss_out[r] = static_cast<T>(log_sum - (static_cast<C>(fr[target]) - max));
        for (int64_t j = 0; j < classes; ++j) {
          const C p = std::exp(static_cast<C>(fr[j]) - max - log_sum);
          bpr[j] = static_cast<T>(j == target ? p - C(1) : p);
        }
      }
    });
  }
};

#define DF_REGISTER_XENT(T)                                                            \
  REGISTER_KERNEL_BUILDER(                                                             \
      Name("SoftmaxCrossEntropyWithLogits").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      SoftmaxXentOp<T>);                                                               \
  REGISTER_KERNEL_BUILDER(Name("SparseSoftmaxCrossEntropyWithLogits")                  \
                              .Device(kDeviceCpu)                                      \
                              .TypeConstraint<T>("T")                                  \
                              .TypeConstraint<int32_t>("Tlabels"),                     \
                          SparseSoftmaxXentOp<T, int32_t>);                            \
  REGISTER_KERNEL_BUILDER(Name("SparseSoftmaxCrossEntropyWithLogits")                  \
                              .Device(kDeviceCpu)                                      \
                              .TypeConstraint<T>("T")                                  \
                              .TypeConstraint<int64_t>("Tlabels"),                     \
                          SparseSoftmaxXentOp<T, int64_t>)

DF_REGISTER_XENT(float);
DF_REGISTER_XENT(double);
DF_REGISTER_XENT(bfloat16);

#undef DF_REGISTER_XENT

}  // namespace
}  // namespace distflow
