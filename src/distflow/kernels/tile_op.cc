// Kernel for Tile. Output dim d of size m_d * n_d is read as the pair
// (m_d, n_d) with input strides (0, stride_d), so one strided copy with zero
// strides performs the repetition and contiguous runs move with memcpy.
#include <vector>

#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class TileOp : public OpKernel {
 public:
  explicit TileOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    std::vector<int64_t> multiples;
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(1), "Tile multiples", &multiples));
    PartialTensorShape computed;
    OP_REQUIRES_OK(ctx, TileOutputShape(input.shape(), multiples, &computed));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ExactShape(computed, &shape));
    if (shape == input.shape()) {
      ctx->set_output(0, input);
      return;
    }
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;
    const DimVector in_strides = RowMajorStrides(input.shape());
    DimVector sizes, strides;
    for (int d = 0; d < input.dims(); ++d) {
      sizes.push_back(multiples[d]);
      strides.push_back(0);
      sizes.push_back(input.dim_size(d));
      strides.push_back(in_strides[d]);
    }
    StridedCopy(input.dtype(), input.raw_data(), sizes, strides, out->raw_data());
  }
};

REGISTER_KERNEL_BUILDER(Name("Tile").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()),
                        TileOp);

}  // namespace
}  // namespace distflow
