// The DynamicStitch kernel. Every data[m] must have shape
// indices[m].shape + S for one S shared by all m; the result is
// [max index + 1] + S. A negative index, or a shape that does not fit, is
// InvalidArgument naming the input.
#include <algorithm>
#include <cstring>

#include "distflow/core/checked_math.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class DynamicStitchOp : public OpKernel {
 public:
  explicit DynamicStitchOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() / 2;
    const Tensor& indices0 = ctx->input(0);
    const Tensor& data0 = ctx->input(n);
    OP_REQUIRES(ctx, data0.dims() >= indices0.dims(),
                errors::InvalidArgument("data[0] has shape ", data0.shape().DebugString(),
                                        ", which does not start with indices[0]'s shape ",
                                        indices0.shape().DebugString()));
    TensorShape suffix;
    for (int d = indices0.dims(); d < data0.dims(); ++d) suffix.AddDim(data0.dim_size(d));
    int64_t max_index = -1;
    for (int m = 0; m < n; ++m) {
      const Tensor& indices = ctx->input(m);
      const Tensor& data = ctx->input(n + m);
      bool fits = data.dims() == indices.dims() + suffix.dims();
      for (int d = 0; fits && d < data.dims(); ++d) {
        const int64_t want =
            d < indices.dims() ? indices.dim_size(d) : suffix.dim_size(d - indices.dims());
        fits = data.dim_size(d) == want;
      }
      OP_REQUIRES(ctx, fits,
                  errors::InvalidArgument("data[", m, "] has shape ", data.shape().DebugString(),
                                          " but must be indices[", m, "]'s shape ",
                                          indices.shape().DebugString(), " followed by ",
                                          suffix.DebugString()));
      for (int32_t index : indices.flat<int32_t>()) {
        OP_REQUIRES(
            ctx, index >= 0,
            errors::InvalidArgument("indices[", m, "] holds ", index, ", which is negative"));
        max_index = std::max<int64_t>(max_index, index);
      }
    }
    TensorShape shape;
    OP_REQUIRES_OK(ctx, shape.AddDimWithStatus(max_index + 1));
    for (int64_t d : suffix.dim_sizes()) OP_REQUIRES_OK(ctx, shape.AddDimWithStatus(d));
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (out->dtype() != DT_STRING && out->NumElements() > 0) {
      std::memset(out->raw_data(), 0, out->TotalBytes());
    }
    const int64_t block = suffix.num_elements();
    if (block == 0) return;
    for (int m = 0; m < n; ++m) {
      const Tensor& data = ctx->input(n + m);
      auto indices = ctx->input(m).flat<int32_t>();
      for (size_t i = 0; i < indices.size(); ++i) {
        CopyElements(out->dtype(), ElementAt(data, static_cast<int64_t>(i) * block), block,
                     ElementAt(*out, indices[i] * block));
      }
    }
  }
};

REGISTER_KERNEL_BUILDER(
    Name("DynamicStitch").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()),
    DynamicStitchOp);

}  // namespace
}  // namespace distflow
