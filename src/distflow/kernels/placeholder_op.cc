// Kernels for Placeholder (always an error: a placeholder that runs was not
// fed) and PlaceholderWithDefault (passes its input through).
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class PlaceholderOp : public OpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    DataType dtype;
    PartialTensorShape shape;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &shape));
    message_ = absl::StrCat("You must feed a value for placeholder tensor '", ctx->name(),
                            "' with dtype ", DataTypeString(dtype));
    if (!shape.unknown_rank()) {
      absl::StrAppend(&message_, " and shape ", shape.DebugString());
    }
  }

  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(absl::InvalidArgumentError(message_));
  }

 private:
  std::string message_;
};

class PlaceholderWithDefaultOp : public OpKernel {
 public:
  explicit PlaceholderWithDefaultOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &shape_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, shape_.IsCompatibleWith(input.shape()),
                errors::InvalidArgument(
                    "PlaceholderWithDefault input has shape ", input.shape().DebugString(),
                    ", which is not compatible with the shape attr ", shape_.DebugString()));
    ctx->set_output(0, input);
  }

 private:
  PartialTensorShape shape_;
};

REGISTER_KERNEL_BUILDER(Name("Placeholder").Device(kDeviceCpu), PlaceholderOp);
REGISTER_KERNEL_BUILDER(Name("PlaceholderWithDefault").Device(kDeviceCpu),
                        PlaceholderWithDefaultOp);

}  // namespace
}  // namespace distflow
