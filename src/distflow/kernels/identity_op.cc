// Kernels for Identity, StopGradient and IdentityN: each output shares its
// input's buffer; nothing is copied.
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class IdentityOp : public OpKernel {
 public:
  explicit IdentityOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) ctx->forward_input_to_output(i, i);
  }
};

REGISTER_KERNEL_BUILDER(Name("Identity").Device(kDeviceCpu), IdentityOp);
REGISTER_KERNEL_BUILDER(Name("StopGradient").Device(kDeviceCpu), IdentityOp);
REGISTER_KERNEL_BUILDER(Name("IdentityN").Device(kDeviceCpu), IdentityOp);

}  // namespace
}  // namespace distflow
