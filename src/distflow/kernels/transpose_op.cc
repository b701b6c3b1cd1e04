// Kernel for Transpose: a strided copy over the permuted input strides, or a
// shared buffer when the permutation only moves dims of size 1.
#include <vector>

#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class TransposeOp : public OpKernel {
 public:
  explicit TransposeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    std::vector<int64_t> perm;
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(1), "Transpose perm", &perm));
    PartialTensorShape computed;
    OP_REQUIRES_OK(ctx, TransposeOutputShape(input.shape(), perm, &computed));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ExactShape(computed, &shape));

    // The layout is unchanged when the dims larger than 1 keep their order.
    bool same_layout = true;
    int64_t last = -1;
    for (int64_t p : perm) {
      if (input.dim_size(p) == 1) continue;
      if (p < last) same_layout = false;
      last = p;
    }
    if (input.NumElements() == 0) {
      Tensor* out;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
      return;
    }
    if (same_layout) {
      Tensor out;
      DF_CHECK(out.CopyFrom(input, shape));
      ctx->set_output(0, out);
      return;
    }
    const DimVector in_strides = RowMajorStrides(input.shape());
    DimVector src_strides(perm.size());
    for (size_t j = 0; j < perm.size(); ++j) src_strides[j] = in_strides[perm[j]];
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    StridedCopy(input.dtype(), input.raw_data(), shape.dim_sizes(), src_strides, out->raw_data());
  }
};

REGISTER_KERNEL_BUILDER(
    Name("Transpose").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()), TransposeOp);

}  // namespace
}  // namespace distflow
