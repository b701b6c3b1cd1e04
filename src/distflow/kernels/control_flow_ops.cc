// Kernels for Switch, Merge, Enter, Exit, NextIteration and LoopCond and
// their Ref variants. Each only forwards its input (a reference stays a
// reference); the executor gives them their meaning: an output Switch leaves
// unset is dead, a Merge runs as soon as one input is alive (the others
// arrive as empty inputs, has_input false), and Enter, Exit and NextIteration
// move their value between loop frames and iterations.
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
    ctx->forward_input_to_output(0, pred.scalar<bool>() ? 1 : 0);
  }
};

class MergeOp : public OpKernel {
 public:
  explicit MergeOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (!ctx->has_input(i)) continue;
      ctx->forward_input_to_output(i, 0);
      ctx->set_output(1, Tensor::Scalar<int32_t>(i));
      return;
    }
    ctx->SetStatus(errors::Internal("Merge ran without a live input"));
  }
};

// Enter, Exit, NextIteration and their Ref variants.
class ForwardOp : public OpKernel {
 public:
  explicit ForwardOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override { ctx->forward_input_to_output(0, 0); }
};

class LoopCondOp : public OpKernel {
 public:
  explicit LoopCondOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& pred = ctx->input(0);
    if (pred.dims() != 0) {
      ctx->SetStatus(errors::InvalidArgument("LoopCond's input must be a scalar, got shape ",
                                             pred.shape().DebugString()));
      return;
    }
    ctx->set_output(0, pred);
  }
};

REGISTER_KERNEL_BUILDER(Name("Switch").Device(kDeviceCpu), SwitchOp);
REGISTER_KERNEL_BUILDER(Name("RefSwitch").Device(kDeviceCpu), SwitchOp);
REGISTER_KERNEL_BUILDER(Name("Merge").Device(kDeviceCpu), MergeOp);
REGISTER_KERNEL_BUILDER(Name("RefMerge").Device(kDeviceCpu), MergeOp);
REGISTER_KERNEL_BUILDER(Name("Enter").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("RefEnter").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("Exit").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("RefExit").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("NextIteration").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("RefNextIteration").Device(kDeviceCpu), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("LoopCond").Device(kDeviceCpu), LoopCondOp);

}  // namespace
}  // namespace distflow
