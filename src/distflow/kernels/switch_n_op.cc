// _SwitchN: Case's lowered form. Forwards its data to one output and leaves
// the others unset, which the executor reads as dead (as for Switch). An
// index out of range picks the last output, as Case runs its last branch.
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class SwitchNOp : public OpKernel {
 public:
  explicit SwitchNOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& index = ctx->input(1);
    OP_REQUIRES(ctx, index.dims() == 0,
                errors::InvalidArgument("output_index must be a scalar, got shape ",
                                        index.shape().DebugString()));
    int32_t out = index.scalar<int32_t>();
    if (out < 0 || out >= ctx->num_outputs()) out = ctx->num_outputs() - 1;
    ctx->set_output(out, ctx->input(0));
  }
};

REGISTER_KERNEL_BUILDER(Name("_SwitchN").Device(kDeviceCpu), SwitchNOp);

}  // namespace
}  // namespace distflow
