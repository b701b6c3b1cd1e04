// Kernel for Bucketize: each element's bucket is the number of boundaries
// less than or equal to it (std::upper_bound over the sorted boundaries).
#include <algorithm>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class BucketizeOp : public OpKernel {
 public:
  explicit BucketizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("boundaries", &boundaries_));
    OP_REQUIRES(ctx, std::is_sorted(boundaries_.begin(), boundaries_.end()),
                errors::InvalidArgument("Bucketize boundaries must be sorted"));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    auto bucket = out->flat<int32_t>();
    VisitDataType(in.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        auto values = in.flat<T>();
        for (size_t i = 0; i < values.size(); ++i) {
          const T v = values[i];
          bucket[i] = static_cast<int32_t>(std::upper_bound(boundaries_.begin(), boundaries_.end(),
                                                            v, [](T x, float b) { return x < b; }) -
                                           boundaries_.begin());
        }
      }
    });
  }

 private:
  std::vector<float> boundaries_;
};

REGISTER_KERNEL_BUILDER(Name("Bucketize").Device(kDeviceCpu), BucketizeOp);

}  // namespace
}  // namespace distflow
