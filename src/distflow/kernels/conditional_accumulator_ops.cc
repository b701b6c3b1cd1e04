// Kernels for conditional accumulators, in both of TensorFlow's forms:
// ConditionalAccumulator outputs a Ref(string) handle holding
// [container, name] and the Accumulator* ops take it; the resource form
// (ResourceConditionalAccumulator, ResourceAccumulator*) uses a DT_RESOURCE
// handle. One kernel class per op serves both. The accumulator lives in the
// device's ResourceMgr (see kernels/conditional_accumulator.h);
// TakeGradient is asynchronous and holds no thread while it waits.
#include <string>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/conditional_accumulator.h"

namespace distflow {
namespace {

class AccumulatorOp : public OpKernel {
 public:
  explicit AccumulatorOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &shape_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("reduction_type", &reduction_type_));
    OP_REQUIRES_OK(ctx, ResourceNameFromAttrs(ctx, &name_));
    if (ctx->output_type(0) == DT_RESOURCE) {
      handle_ = Tensor(DT_RESOURCE, TensorShape());
      handle_.scalar<ResourceHandle>() =
          MakeResourceHandle<ConditionalAccumulator>(ctx->device(), name_.container, name_.name);
    } else {
      handle_ = Tensor(DT_STRING, TensorShape({2}));
      handle_.flat<std::string>()[0] = name_.container;
      handle_.flat<std::string>()[1] = name_.name;
    }
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceMgr*> rm = GetResourceMgr(ctx->device());
    OP_REQUIRES_OK(ctx, rm.status());
    auto accumulator = (*rm)->LookupOrCreate<ConditionalAccumulator>(
        name_.container, name_.name, [this]() -> absl::StatusOr<ConditionalAccumulator*> {
          return new ConditionalAccumulator(name_.name, dtype_, shape_, reduction_type_);
        });
    OP_REQUIRES_OK(ctx, accumulator.status());
    OP_REQUIRES_OK(ctx, (*accumulator)->MatchesAttrs(dtype_, shape_, reduction_type_));
    if (handle_.dtype() == DT_RESOURCE) {
      ctx->set_output(0, handle_);
    } else {
      // The handle never changes; the mutex only satisfies the ref contract.
      ctx->set_output_ref(0, &handle_mu_, &handle_);
    }
  }

 private:
  DataType dtype_;
  PartialTensorShape shape_;
  std::string reduction_type_;
  ResourceName name_;
  absl::Mutex handle_mu_;
  Tensor handle_;
};

REGISTER_KERNEL_BUILDER(Name("ConditionalAccumulator")
                            .Device(kDeviceCpu)
                            .TypeConstraint("dtype", {DT_FLOAT, DT_DOUBLE}),
                        AccumulatorOp);
REGISTER_KERNEL_BUILDER(Name("ResourceConditionalAccumulator")
                            .Device(kDeviceCpu)
                            .TypeConstraint("dtype", {DT_FLOAT, DT_DOUBLE}),
                        AccumulatorOp);

// The accumulator input 0 names, in either handle form.
absl::StatusOr<RefPtr<ConditionalAccumulator>> AccumulatorFromInput(OpKernelContext* ctx) {
  if (ctx->input_dtype(0) == DT_RESOURCE) {
    DF_ASSIGN_OR_RETURN(ResourceHandle handle, HandleFromInput(ctx, 0));
    return LookupResource<ConditionalAccumulator>(ctx, handle);
  }
  std::string container, name;
  {
    absl::Mutex* mu = ctx->input_ref_mutex(0);
    if (mu != nullptr) mu->ReaderLock();
    absl::Cleanup unlock = [mu] {
      if (mu != nullptr) mu->ReaderUnlock();
    };
    const Tensor& t = ctx->input(0);
    if (t.dtype() != DT_STRING || t.shape() != TensorShape({2})) {
      return errors::InvalidArgument("an accumulator handle must be a [2] string tensor, got ",
                                     t.DebugString());
    }
    container = t.flat<std::string>()[0];
    name = t.flat<std::string>()[1];
  }
  DF_ASSIGN_OR_RETURN(ResourceMgr * rm, GetResourceMgr(ctx->device()));
  return rm->Lookup<ConditionalAccumulator>(container, name);
}

// InvalidArgument naming the input unless input `i` is a scalar.
absl::Status CheckScalar(OpKernelContext* ctx, int i, absl::string_view name) {
  if (ctx->input(i).dims() == 0) return absl::OkStatus();
  return errors::InvalidArgument(name, " must be a scalar, got shape ",
                                 ctx->input(i).shape().DebugString());
}

class AccumulatorApplyGradientOp : public OpKernel {
 public:
  explicit AccumulatorApplyGradientOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckScalar(ctx, 1, "local_step"));
    auto accumulator = AccumulatorFromInput(ctx);
    OP_REQUIRES_OK(ctx, accumulator.status());
    OP_REQUIRES_OK(ctx,
                   (*accumulator)->TryApplyGrad(ctx->input(1).scalar<int64_t>(), ctx->input(2)));
  }
};

REGISTER_KERNEL_BUILDER(Name("AccumulatorApplyGradient").Device(kDeviceCpu),
                        AccumulatorApplyGradientOp);
REGISTER_KERNEL_BUILDER(Name("ResourceAccumulatorApplyGradient").Device(kDeviceCpu),
                        AccumulatorApplyGradientOp);

class AccumulatorTakeGradientOp : public AsyncOpKernel {
 public:
  explicit AccumulatorTakeGradientOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    OP_REQUIRES_OK_ASYNC(ctx, CheckScalar(ctx, 1, "num_required"), done);
    auto accumulator = AccumulatorFromInput(ctx);
    OP_REQUIRES_OK_ASYNC(ctx, accumulator.status(), done);
    OP_REQUIRES_ASYNC(ctx, (*accumulator)->dtype() == dtype_,
                      errors::InvalidArgument("Accumulator '", (*accumulator)->name(), "' is ",
                                              DataTypeString((*accumulator)->dtype()), ", not ",
                                              DataTypeString(dtype_)),
                      done);
    (*accumulator)
        ->TryTakeGrad(ctx->input(1).scalar<int32_t>(), ctx->cancellation_manager(),
                      [ctx, done = std::move(done)](const absl::Status& s, Tensor average) {
                        if (s.ok()) {
                          ctx->set_output(0, std::move(average));
                        } else {
                          ctx->SetStatus(s);
                        }
                        done();
                      });
  }

 private:
  DataType dtype_;
};

REGISTER_KERNEL_BUILDER(Name("AccumulatorTakeGradient").Device(kDeviceCpu),
                        AccumulatorTakeGradientOp);
REGISTER_KERNEL_BUILDER(Name("ResourceAccumulatorTakeGradient").Device(kDeviceCpu),
                        AccumulatorTakeGradientOp);

class AccumulatorNumAccumulatedOp : public OpKernel {
 public:
  explicit AccumulatorNumAccumulatedOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    auto accumulator = AccumulatorFromInput(ctx);
    OP_REQUIRES_OK(ctx, accumulator.status());
    ctx->set_output(0, Tensor::Scalar<int32_t>((*accumulator)->num_accumulated()));
  }
};

REGISTER_KERNEL_BUILDER(Name("AccumulatorNumAccumulated").Device(kDeviceCpu),
                        AccumulatorNumAccumulatedOp);
REGISTER_KERNEL_BUILDER(Name("ResourceAccumulatorNumAccumulated").Device(kDeviceCpu),
                        AccumulatorNumAccumulatedOp);

class AccumulatorSetGlobalStepOp : public OpKernel {
 public:
  explicit AccumulatorSetGlobalStepOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckScalar(ctx, 1, "new_global_step"));
    auto accumulator = AccumulatorFromInput(ctx);
    OP_REQUIRES_OK(ctx, accumulator.status());
    (*accumulator)->SetGlobalStep(ctx->input(1).scalar<int64_t>());
  }
};

REGISTER_KERNEL_BUILDER(Name("AccumulatorSetGlobalStep").Device(kDeviceCpu),
                        AccumulatorSetGlobalStepOp);
REGISTER_KERNEL_BUILDER(Name("ResourceAccumulatorSetGlobalStep").Device(kDeviceCpu),
                        AccumulatorSetGlobalStepOp);

}  // namespace
}  // namespace distflow
