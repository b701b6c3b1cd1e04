// CPU kernels for Softmax and LogSoftmax over the last dimension of a tensor
// of rank >= 1, for float, double and bfloat16 (computed in float). Each row
// is shifted by its maximum first, so large logits do not overflow.
#include <cmath>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/nn_kernel_util.h"

namespace distflow {
namespace {

template <typename T, bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  explicit SoftmaxOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    using C = nn::ComputeType<T>;
    const Tensor& logits = ctx->input(0);
    OP_REQUIRES(ctx, logits.dims() >= 1,
                errors::InvalidArgument("logits must have rank >= 1, got shape ",
                                        logits.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, logits.shape(), &out));
    const int64_t cols = logits.dim_size(logits.dims() - 1);
    const int64_t rows = cols == 0 ? 0 : logits.NumElements() / cols;
    const T* x = logits.base<T>();
    T* y = out->base<T>();
    // `y` may alias `x`: each element is read before it is written.
    nn::ParallelFor(ctx, rows, 40 * cols, [x, y, cols](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* xr = x + r * cols;
        T* yr = y + r * cols;
        C max;
        const C log_sum = nn::RowMaxAndLogSumExp(xr, cols, 1, &max);
        for (int64_t j = 0; j < cols; ++j) {
          const C shifted = static_cast<C>(xr[j]) - max - log_sum;
          yr[j] = static_cast<T>(kLog ? shifted : std::exp(shifted));
        }
      }
    });
  }
};

#define DF_REGISTER_SOFTMAX(T)                                                          \
  REGISTER_KERNEL_BUILDER(Name("Softmax").Device(kDeviceCpu).TypeConstraint<T>("T"),    \
                          SoftmaxOp<T, false>);                                         \
  REGISTER_KERNEL_BUILDER(Name("LogSoftmax").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                          SoftmaxOp<T, true>)

DF_REGISTER_SOFTMAX(float);
DF_REGISTER_SOFTMAX(double);
DF_REGISTER_SOFTMAX(bfloat16);

#undef DF_REGISTER_SOFTMAX

}  // namespace
}  // namespace distflow
