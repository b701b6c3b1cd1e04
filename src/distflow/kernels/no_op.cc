// Kernel for NoOp.
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class NoOpKernel : public OpKernel {
 public:
  explicit NoOpKernel(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext*) override {}
};

REGISTER_KERNEL_BUILDER(Name("NoOp").Device(kDeviceCpu), NoOpKernel);

}  // namespace
}  // namespace distflow
