// CPU kernel for L2Loss: sum(t ** 2) / 2 as a scalar, for float, double and
// bfloat16. The sum is accumulated in double, in element order, so the result
// does not depend on the thread count.
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

template <typename T>
class L2LossOp : public OpKernel {
 public:
  explicit L2LossOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    double sum = 0;
    for (const T& v : t.flat<T>()) {
      const double d = static_cast<double>(v);
      sum += d * d;
    }
    out->scalar<T>() = static_cast<T>(sum / 2);
  }
};

REGISTER_KERNEL_BUILDER(Name("L2Loss").Device(kDeviceCpu).TypeConstraint<float>("T"),
                        L2LossOp<float>);
REGISTER_KERNEL_BUILDER(Name("L2Loss").Device(kDeviceCpu).TypeConstraint<double>("T"),
                        L2LossOp<double>);
REGISTER_KERNEL_BUILDER(Name("L2Loss").Device(kDeviceCpu).TypeConstraint<bfloat16>("T"),
                        L2LossOp<bfloat16>);

}  // namespace
}  // namespace distflow
