// Kernel for ReverseV2: one strided copy that reads each reversed dimension
// from its last element with a negative stride.
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class ReverseV2Op : public OpKernel {
 public:
  explicit ReverseV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    std::vector<int64_t> axes;
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(1), "ReverseV2 axis", &axes));
    std::vector<bool> reversed(input.dims(), false);
    for (int64_t a : axes) {
      int axis = 0;
      OP_REQUIRES_OK(ctx, CanonicalAxis(a, input.dims(), "ReverseV2 axis", &axis));
      OP_REQUIRES(ctx, !reversed[axis],
                  errors::InvalidArgument("ReverseV2 axis ", a, " is listed twice"));
      reversed[axis] = true;
    }
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &out));
    if (input.NumElements() == 0) return;
    DimVector strides = RowMajorStrides(input.shape());
    int64_t start = 0;
    for (int d = 0; d < input.dims(); ++d) {
      if (!reversed[d]) continue;
      start += (input.dim_size(d) - 1) * strides[d];
      strides[d] = -strides[d];
    }
    StridedCopy(input.dtype(), ElementAt(input, start), input.shape().dim_sizes(), strides,
                out->raw_data());
  }
};

REGISTER_KERNEL_BUILDER(Name("ReverseV2").Device(kDeviceCpu), ReverseV2Op);

}  // namespace
}  // namespace distflow
