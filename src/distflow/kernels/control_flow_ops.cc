// Kernels for Switch and Merge. The executor gives them their dead-tensor
// semantics: an output Switch leaves unset is dead, and a Merge runs as soon
// as one input is alive (the others arrive as empty inputs, has_input false).
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class SwitchOp : public OpKernel {
 public:
  explicit SwitchOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& pred = ctx->input(1);
    if (pred.dims() != 0) {
      ctx->SetStatus(
          errors::InvalidArgument("pred must be a scalar, got shape ", pred.shape().DebugString()));
      return;
    }
    ctx->set_output(pred.scalar<bool>() ? 1 : 0, ctx->input(0));
  }
};

class MergeOp : public OpKernel {
 public:
  explicit MergeOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (!ctx->has_input(i)) continue;
      ctx->set_output(0, ctx->input(i));
      ctx->set_output(1, Tensor::Scalar<int32_t>(i));
      return;
    }
    ctx->SetStatus(errors::Internal("Merge ran without a live input"));
  }
};

REGISTER_KERNEL_BUILDER(Name("Switch").Device(kDeviceCpu), SwitchOp);
REGISTER_KERNEL_BUILDER(Name("Merge").Device(kDeviceCpu), MergeOp);

}  // namespace
}  // namespace distflow
