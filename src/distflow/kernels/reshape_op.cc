// Kernels for Reshape, ExpandDims and Squeeze: the output shares the input's
// buffer under a new shape.
#include <vector>

#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"

namespace distflow {
namespace {

// Outputs `input` viewed with the shape the rules computed.
void SetReshapedOutput(OpKernelContext* ctx, const Tensor& input,
                       const PartialTensorShape& computed) {
  TensorShape shape;
  OP_REQUIRES_OK(ctx, ExactShape(computed, &shape));
  Tensor out;
  OP_REQUIRES(ctx, out.CopyFrom(input, shape),
              errors::Internal("reshape of ", input.shape().DebugString(), " to ",
                               shape.DebugString(), " changes the element count"));
  ctx->set_output(0, out);
}

class ReshapeOp : public OpKernel {
 public:
  explicit ReshapeOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> sizes;
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(1), "Reshape shape", &sizes));
    PartialTensorShape out;
    OP_REQUIRES_OK(ctx, ReshapeOutputShape(ctx->input(0).shape(), sizes, &out));
    SetReshapedOutput(ctx, ctx->input(0), out);
  }
};

class ExpandDimsOp : public OpKernel {
 public:
  explicit ExpandDimsOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dim = ctx->input(1);
    OP_REQUIRES(ctx, dim.NumElements() == 1,
                errors::InvalidArgument("ExpandDims dim must hold a single value, got shape ",
                                        dim.shape().DebugString()));
    const int64_t d = dim.dtype() == DT_INT32 ? dim.flat<int32_t>()[0] : dim.flat<int64_t>()[0];
    PartialTensorShape out;
    OP_REQUIRES_OK(ctx, ExpandDimsOutputShape(ctx->input(0).shape(), d, &out));
    SetReshapedOutput(ctx, ctx->input(0), out);
  }
};

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("squeeze_dims", &squeeze_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    PartialTensorShape out;
    OP_REQUIRES_OK(ctx, SqueezeOutputShape(ctx->input(0).shape(), squeeze_dims_, &out));
    SetReshapedOutput(ctx, ctx->input(0), out);
  }

 private:
  std::vector<int64_t> squeeze_dims_;
};

REGISTER_KERNEL_BUILDER(Name("Reshape").Device(kDeviceCpu), ReshapeOp);
REGISTER_KERNEL_BUILDER(Name("ExpandDims").Device(kDeviceCpu), ExpandDimsOp);
REGISTER_KERNEL_BUILDER(Name("Squeeze").Device(kDeviceCpu), SqueezeOp);

}  // namespace
}  // namespace distflow
