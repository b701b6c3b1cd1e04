// Kernels for _Arg and _Retval on the CPU: argument `index` of the step's
// call frame becomes the node's output, and the node's input becomes result
// `index`. A graph with these nodes runs only with a call frame (a
// DirectSession's run, see framework/call_frame.h); inside function bodies
// they never reach a kernel (calls are inlined before placement).
#include "distflow/framework/call_frame.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("T", &dtype_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("index", &index_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->call_frame() != nullptr,
                errors::FailedPrecondition("_Arg runs only with a call frame"));
    Tensor value;
    OP_REQUIRES_OK(ctx, ctx->call_frame()->GetArg(static_cast<int>(index_), &value));
    OP_REQUIRES(ctx, value.dtype() == dtype_,
                errors::InvalidArgument("argument ", index_, " is ", DataTypeString(value.dtype()),
                                        " but the node takes ", DataTypeString(dtype_)));
    ctx->set_output(0, std::move(value));
  }

 private:
  DataType dtype_ = DT_INVALID;
  int64_t index_ = 0;
};

class RetvalOp : public OpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("index", &index_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->call_frame() != nullptr,
                errors::FailedPrecondition("_Retval runs only with a call frame"));
    OP_REQUIRES_OK(ctx, ctx->call_frame()->SetRetval(static_cast<int>(index_), ctx->input(0)));
  }

 private:
  int64_t index_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("_Arg").Device(kDeviceCpu), ArgOp);
REGISTER_KERNEL_BUILDER(Name("_Retval").Device(kDeviceCpu), RetvalOp);

}  // namespace
}  // namespace distflow
