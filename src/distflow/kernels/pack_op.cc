// Kernels for Pack (stack N tensors along a new axis) and Unpack (the
// inverse). Unpack along a leading axis gives views of the input's buffer
// where the pieces start aligned.
#include <vector>

#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

// The product of dims [begin, end) of `shape`.
int64_t DimProduct(const TensorShape& shape, int begin, int end) {
  int64_t n = 1;
  for (int d = begin; d < end; ++d) n *= shape.dim_size(d);
  return n;
}

class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    std::vector<PartialTensorShape> shapes;
    shapes.reserve(n);
    for (int i = 0; i < n; ++i) shapes.emplace_back(ctx->input(i).shape());
    PartialTensorShape computed;
    OP_REQUIRES_OK(ctx, PackOutputShape(shapes, axis_, &computed));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ExactShape(computed, &shape));
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;

    const TensorShape& in = ctx->input(0).shape();
    const int a = static_cast<int>(axis_ < 0 ? axis_ + in.dims() + 1 : axis_);
    const int64_t rows = DimProduct(in, 0, a);
    std::vector<const void*> srcs(n);
    for (int i = 0; i < n; ++i) srcs[i] = ctx->input(i).raw_data();
    const std::vector<int64_t> chunks(n, DimProduct(in, a, in.dims()));
    ConcatRows(out->dtype(), srcs, chunks, rows, out->raw_data());
  }

 private:
  int64_t axis_;
};

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int num = ctx->num_outputs();
    PartialTensorShape computed;
    OP_REQUIRES_OK(ctx, UnpackOutputShape(input.shape(), axis_, num, &computed));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ExactShape(computed, &shape));
    const int a = static_cast<int>(axis_ < 0 ? axis_ + input.dims() : axis_);
    const int64_t rows = DimProduct(input.shape(), 0, a);
    const int64_t inner = shape.num_elements() / std::max<int64_t>(rows, 1);

    if (rows == 1) {
      // Each output is one contiguous block of the input.
      for (int i = 0; i < num; ++i) {
        SetFlatRangeOutput(ctx, i, input, i * inner, shape);
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
    SplitRows(input.dtype(), input.raw_data(), dsts, std::vector<int64_t>(num, inner), rows);
  }

 private:
  int64_t axis_;
};

REGISTER_KERNEL_BUILDER(Name("Pack").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()),
                        PackOp);
REGISTER_KERNEL_BUILDER(Name("Unpack").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()),
                        UnpackOp);

}  // namespace
}  // namespace distflow
