// Kernel for AddN: the elementwise sum of N same-shaped tensors. The output
// reuses input 0's buffer when no one else holds it.
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/cwise_ops.h"

namespace distflow {
namespace {

template <typename T>
class AddNOp : public OpKernel {
 public:
  explicit AddNOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < n; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).shape() == first.shape(),
                  errors::InvalidArgument("AddN inputs must have the same shape: input 0 has ",
                                          first.shape().DebugString(), ", input ", i, " has ",
                                          ctx->input(i).shape().DebugString()));
    }
    if (n == 1) {
      ctx->set_output(0, first);
      return;
    }
    std::vector<const T*> inputs(n);
    for (int i = 0; i < n; ++i) inputs[i] = ctx->input(i).template base<T>();
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, first.shape(), &output));
    T* out = output->base<T>();
    using C = ComputeType<T>;
    ShardElementwise(
        ctx, first.NumElements(), kCheapElementCost * n, [&](int64_t begin, int64_t end) {
          // Block so the running sum stays in cache across the
          // inputs.
          constexpr int64_t kBlock = 2048;
          C acc[kBlock];
          for (int64_t b = begin; b < end; b += kBlock) {
            const int64_t len = std::min(kBlock, end - b);
            for (int64_t j = 0; j < len; ++j) {
              acc[j] = static_cast<C>(inputs[0][b + j]) + static_cast<C>(inputs[1][b + j]);
            }
            for (int i = 2; i < n; ++i) {
              const T* in = inputs[i] + b;
              for (int64_t j = 0; j < len; ++j) acc[j] += static_cast<C>(in[j]);
            }
            for (int64_t j = 0; j < len; ++j) out[b + j] = static_cast<T>(acc[j]);
          }
        });
  }
};

REGISTER_KERNEL_BUILDER(Name("AddN").Device(kDeviceCpu).TypeConstraint<float>("T"), AddNOp<float>);
REGISTER_KERNEL_BUILDER(Name("AddN").Device(kDeviceCpu).TypeConstraint<double>("T"),
                        AddNOp<double>);
REGISTER_KERNEL_BUILDER(Name("AddN").Device(kDeviceCpu).TypeConstraint<int32_t>("T"),
                        AddNOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("AddN").Device(kDeviceCpu).TypeConstraint<int64_t>("T"),
                        AddNOp<int64_t>);
REGISTER_KERNEL_BUILDER(Name("AddN").Device(kDeviceCpu).TypeConstraint<bfloat16>("T"),
                        AddNOp<bfloat16>);

}  // namespace
}  // namespace distflow
