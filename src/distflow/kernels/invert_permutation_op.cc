// Kernel for InvertPermutation: y[x[i]] = i. A value out of [0, n) or
// repeated is InvalidArgument naming its position.
#include <cstdint>
#include <vector>

#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

template <typename T>
class InvertPermutationOp : public OpKernel {
 public:
  explicit InvertPermutationOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.dims() == 1,
                errors::InvalidArgument("InvertPermutation expects a vector, got shape ",
                                        x.shape().DebugString()));
    Tensor* y;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const int64_t n = x.NumElements();
    const T* in = x.base<T>();
    T* out = y->base<T>();
    std::vector<bool> seen(n, false);
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i];
      OP_REQUIRES(
          ctx, v >= 0 && v < n && !seen[v],
          errors::InvalidArgument("InvertPermutation x[", i, "] = ", v, " is out of [0, ", n,
                                  ") or repeated: x must be a "
                                  "permutation"));
      seen[v] = true;
      out[v] = static_cast<T>(i);
    }
  }
};

REGISTER_KERNEL_BUILDER(Name("InvertPermutation").Device(kDeviceCpu).TypeConstraint<int32_t>("T"),
                        InvertPermutationOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("InvertPermutation").Device(kDeviceCpu).TypeConstraint<int64_t>("T"),
                        InvertPermutationOp<int64_t>);

}  // namespace
}  // namespace distflow
