// Kernel for Range: start + i * delta for i in [0, n), with n from the
// shared RangeSize rule (framework/array_shapes.h).
#include <type_traits>

#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class RangeOp : public OpKernel {
 public:
  explicit RangeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& start = ctx->input(0);
    const Tensor& delta = ctx->input(2);
    absl::StatusOr<int64_t> n = RangeSize(start, ctx->input(1), delta);
    OP_REQUIRES_OK(ctx, n.status());
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::BuildTensorShape({*n}, &shape));
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    VisitDataType(start.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_same_v<T, bfloat16>) {
        const float s = static_cast<float>(start.scalar<T>());
        const float d = static_cast<float>(delta.scalar<T>());
        T* p = out->base<T>();
        for (int64_t i = 0; i < *n; ++i) p[i] = static_cast<T>(s + static_cast<float>(i) * d);
      } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        const T s = start.scalar<T>();
        const T d = delta.scalar<T>();
        T* p = out->base<T>();
        for (int64_t i = 0; i < *n; ++i) p[i] = static_cast<T>(s + static_cast<T>(i) * d);
      }
    });
  }
};

REGISTER_KERNEL_BUILDER(Name("Range").Device(kDeviceCpu), RangeOp);

}  // namespace
}  // namespace distflow
