// AnonymousSeedGenerator (a SeedGenerator resource under a fresh name, with
// its deleter) and DeleteSeedGenerator.
#include "distflow/core/status.h"
#include "distflow/data/anonymous_resource.h"
#include "distflow/data/seed_generator.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/resource_mgr.h"

namespace distflow {
namespace {

class AnonymousSeedGeneratorOp : public OpKernel {
 public:
  explicit AnonymousSeedGeneratorOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    for (int i : {0, 1}) {
      OP_REQUIRES(
          ctx, ctx->input(i).dtype() == DT_INT64 && ctx->input(i).dims() == 0,
          errors::InvalidArgument("input ", i, " of node '", name(), "' must be an int64 scalar"));
    }
    OP_REQUIRES(
        ctx, ctx->input(2).dtype() == DT_BOOL && ctx->input(2).dims() == 0,
        errors::InvalidArgument("input 'reshuffle' of node '", name(), "' must be a bool scalar"));
    absl::StatusOr<ResourceMgr*> rm = GetResourceMgr(ctx->device());
    OP_REQUIRES_OK(ctx, rm.status());
    const ResourceHandle handle = MakeResourceHandle<SeedGenerator>(
        ctx->device(), "", UniqueResourceName("AnonymousSeedGenerator"));
    OP_REQUIRES_OK(ctx, (*rm)->Create(handle.container(), handle.name(),
                                      new SeedGenerator(ctx->input(0).scalar<int64_t>(),
                                                        ctx->input(1).scalar<int64_t>(),
                                                        ctx->input(2).scalar<bool>())));
    SetHandleAndDeleterOutputs(ctx, handle);
  }
};

class DeleteSeedGeneratorOp : public OpKernel {
 public:
  explicit DeleteSeedGeneratorOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override { OP_REQUIRES_OK(ctx, DeleteAnonymousResource(ctx)); }
};

REGISTER_KERNEL_BUILDER(Name("AnonymousSeedGenerator").Device(kDeviceCpu),
                        AnonymousSeedGeneratorOp);
REGISTER_KERNEL_BUILDER(Name("DeleteSeedGenerator").Device(kDeviceCpu), DeleteSeedGeneratorOp);

}  // namespace
}  // namespace distflow
