// Kernel for ConcatV2: for each row of the dims before the axis, copies one
// contiguous block from each input in turn.
#include <vector>

#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class ConcatV2Op : public OpKernel {
 public:
  explicit ConcatV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    int64_t axis;
    OP_REQUIRES_OK(ctx, IndexScalar(ctx->input(n), "ConcatV2 axis", &axis));
    std::vector<PartialTensorShape> shapes;
    shapes.reserve(n);
    for (int i = 0; i < n; ++i) shapes.emplace_back(ctx->input(i).shape());
    PartialTensorShape computed;
    OP_REQUIRES_OK(ctx, ConcatOutputShape(shapes, axis, &computed));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ExactShape(computed, &shape));
    int a;
    OP_REQUIRES_OK(ctx, CanonicalAxis(axis, shape.dims(), "concat axis", &a));

    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;
    int64_t rows = 1;
    for (int d = 0; d < a; ++d) rows *= shape.dim_size(d);
    std::vector<const void*> srcs(n);
    std::vector<int64_t> chunks(n);
    for (int i = 0; i < n; ++i) {
      srcs[i] = ctx->input(i).raw_data();
      chunks[i] = ctx->input(i).NumElements() / rows;
    }
    ConcatRows(out->dtype(), srcs, chunks, rows, out->raw_data());
  }
};

REGISTER_KERNEL_BUILDER(Name("ConcatV2").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()),
                        ConcatV2Op);

}  // namespace
}  // namespace distflow
