// Kernel for OneHot: the output, viewed as [prefix, depth, suffix] around the
// new axis, is filled with off_value and then on_value is written at each
// in-range index. Out-of-range (including negative) indices give a row of
// off_value, as in TensorFlow.
#include <vector>

#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    int64_t depth;
    OP_REQUIRES_OK(ctx, IndexScalar(ctx->input(1), "OneHot depth", &depth));
    OP_REQUIRES(ctx, depth >= 0,
                errors::InvalidArgument("OneHot depth must be non-negative, got ", depth));
    const Tensor& on = ctx->input(2);
    const Tensor& off = ctx->input(3);
    OP_REQUIRES(ctx, on.dims() == 0,
                errors::InvalidArgument("OneHot on_value must be a scalar, got shape ",
                                        on.shape().DebugString()));
    OP_REQUIRES(ctx, off.dims() == 0,
                errors::InvalidArgument("OneHot off_value must be a scalar, got shape ",
                                        off.shape().DebugString()));
    PartialTensorShape computed;
    OP_REQUIRES_OK(ctx, OneHotOutputShape(indices.shape(), depth, axis_, &computed));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ExactShape(computed, &shape));
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;

    std::vector<int64_t> ix;
    ix.reserve(indices.NumElements());
    VisitDataType(indices.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_integral_v<T>) {
        for (T v : indices.flat<T>()) ix.push_back(static_cast<int64_t>(v));
      }
    });
    const int a = static_cast<int>(axis_ == -1 ? indices.dims() : axis_);
    int64_t suffix = 1;
    for (int d = a; d < indices.dims(); ++d) suffix *= indices.dim_size(d);
    const DataType dtype = out->dtype();
    FillElements(dtype, off.raw_data(), shape.num_elements(), out->raw_data());
    for (size_t i = 0; i < ix.size(); ++i) {
      if (ix[i] < 0 || ix[i] >= depth) continue;
      const int64_t p = static_cast<int64_t>(i) / suffix;
      const int64_t s = static_cast<int64_t>(i) % suffix;
      CopyElements(dtype, on.raw_data(), 1, ElementAt(*out, (p * depth + ix[i]) * suffix + s));
    }
  }

 private:
  int64_t axis_;
};

REGISTER_KERNEL_BUILDER(Name("OneHot").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()),
                        OneHotOp);

}  // namespace
}  // namespace distflow
