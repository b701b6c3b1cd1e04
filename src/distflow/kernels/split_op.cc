// Kernel for Split: num_split equal pieces along split_dim. When the dims
// before split_dim are all 1, each piece is a contiguous block, a view of the
// input's buffer when it starts aligned; otherwise rows are copied out.
#include <vector>

#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class SplitOp : public OpKernel {
 public:
  explicit SplitOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    int64_t split_dim;
    OP_REQUIRES_OK(ctx, IndexScalar(ctx->input(0), "Split split_dim", &split_dim));
    const Tensor& input = ctx->input(1);
    const int num = ctx->num_outputs();
    PartialTensorShape computed;
    OP_REQUIRES_OK(ctx, SplitOutputShape(input.shape(), split_dim, num, &computed));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ExactShape(computed, &shape));
    if (num == 1) {
      ctx->set_output(0, input);
      return;
    }
    int a;
    OP_REQUIRES_OK(ctx, CanonicalAxis(split_dim, input.dims(), "split_dim", &a));
    int64_t rows = 1;
    for (int d = 0; d < a; ++d) rows *= input.dim_size(d);
    const int64_t piece = shape.num_elements() / std::max<int64_t>(rows, 1);

    if (rows == 1) {
      for (int i = 0; i < num; ++i) {
        SetFlatRangeOutput(ctx, i, input, i * piece, shape);
      }
      return;
    }
    std::vector<void*> dsts(num);
    for (int i = 0; i < num; ++i) {
      Tensor* out;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, shape, &out));
      dsts[i] = out->raw_data();
    }
    if (shape.num_elements() == 0) return;
    SplitRows(input.dtype(), input.raw_data(), dsts, std::vector<int64_t>(num, piece), rows);
  }
};

REGISTER_KERNEL_BUILDER(Name("Split").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()),
                        SplitOp);

}  // namespace
}  // namespace distflow
