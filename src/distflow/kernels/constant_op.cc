// Kernel for Const: the value is parsed once, when the kernel is built, and
// every step outputs a tensor sharing that one buffer.
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("value", &value_));
    DataType dtype;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype));
    OP_REQUIRES(ctx, value_.dtype() == dtype,
                errors::InvalidArgument("Const value has type ", DataTypeString(value_.dtype()),
                                        " but dtype is ", DataTypeString(dtype)));
  }

  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, value_); }

 private:
  Tensor value_;
};

REGISTER_KERNEL_BUILDER(Name("Const").Device(kDeviceCpu), ConstOp);

}  // namespace
}  // namespace distflow
