// Kernel for Slice: the box of `size` (-1: to the end) starting at `begin`.
// A contiguous box that starts aligned is a view of the input's buffer;
// others are copied by rows.
#include <vector>

#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"

namespace distflow {
namespace {

class SliceOp : public OpKernel {
 public:
  explicit SliceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    std::vector<int64_t> begin, size;
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(1), "Slice begin", &begin));
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(2), "Slice size", &size));
    PartialTensorShape computed;
    OP_REQUIRES_OK(ctx, SliceOutputShape(input.shape(), begin, size, &computed));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ExactShape(computed, &shape));
    const std::vector<int64_t> strides(input.dims(), 1);
    SetStridedBoxOutput(ctx, 0, input, begin, strides, shape.dim_sizes(), shape);
  }
};

REGISTER_KERNEL_BUILDER(Name("Slice").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()),
                        SliceOp);

}  // namespace
}  // namespace distflow
