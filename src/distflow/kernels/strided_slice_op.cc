// Kernel for StridedSlice. The index spec is interpreted by
// framework/strided_slice_spec.h (shared with the shape function); the kernel
// then takes the resulting strided box, a view of the input's buffer when the
// box is contiguous and starts aligned.
#include <vector>

#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/strided_slice_spec.h"
#include "distflow/kernels/array_kernel_util.h"

namespace distflow {
namespace {

class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("begin_mask", &masks_.begin_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("end_mask", &masks_.end_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ellipsis_mask", &masks_.ellipsis_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("new_axis_mask", &masks_.new_axis_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shrink_axis_mask", &masks_.shrink_axis_mask));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    std::vector<int64_t> begin, end, strides;
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(1), "StridedSlice begin", &begin));
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(2), "StridedSlice end", &end));
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(3), "StridedSlice strides", &strides));
    StridedSliceSpec spec;
    OP_REQUIRES_OK(ctx, ComputeStridedSlice(input.shape(), begin, end, strides, masks_, &spec));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ExactShape(spec.final_shape, &shape));
    SetStridedBoxOutput(ctx, 0, input, spec.begin, spec.stride, spec.size, shape);
  }

 private:
  StridedSliceMasks masks_;
};

REGISTER_KERNEL_BUILDER(
    Name("StridedSlice").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()),
    StridedSliceOp);

}  // namespace
}  // namespace distflow
