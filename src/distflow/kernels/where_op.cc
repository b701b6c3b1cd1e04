// Kernel for Where (one input): the row-major coordinates of the input's
// non-zero (true) elements, as an int64 [count, rank] matrix.
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class WhereOp : public OpKernel {
 public:
  explicit WhereOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    std::vector<int64_t> hits;
    VisitDataType(in.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_arithmetic_v<T>) {
        auto values = in.flat<T>();
        for (size_t i = 0; i < values.size(); ++i) {
          if (values[i] != T{}) hits.push_back(static_cast<int64_t>(i));
        }
      }
    });
    const int rank = in.dims();
    Tensor* out;
    OP_REQUIRES_OK(
        ctx, ctx->allocate_output(0, TensorShape({static_cast<int64_t>(hits.size()), rank}), &out));
    int64_t* coords = out->base<int64_t>();
    for (size_t h = 0; h < hits.size(); ++h) {
      int64_t rest = hits[h];
      for (int d = rank - 1; d >= 0; --d) {
        coords[h * rank + d] = rest % in.dim_size(d);
        rest /= in.dim_size(d);
      }
    }
  }
};

REGISTER_KERNEL_BUILDER(Name("Where").Device(kDeviceCpu), WhereOp);

}  // namespace
}  // namespace distflow
