// Kernels for reference variables: VariableV2 outputs a reference to a
// LegacyVar kept in the device's ResourceMgr; Assign, AssignAdd, AssignSub
// update through that reference under the variable's mutex and pass it on;
// IsVariableInitialized reads whether it was ever assigned.
#include <string>
#include <type_traits>

#include "absl/synchronization/mutex.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/var.h"

namespace distflow {
namespace {

class VariableOp : public OpKernel {
 public:
  explicit VariableOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &shape_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(ctx, ResourceNameFromAttrs(ctx, &name_));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::MutexLock l(&mu_);
    if (var_ == nullptr) {
      absl::StatusOr<ResourceMgr*> rm = GetResourceMgr(ctx->device());
      OP_REQUIRES_OK(ctx, rm.status());
      auto var = (*rm)->LookupOrCreate<LegacyVar>(
          name_.container, name_.name, [this]() -> absl::StatusOr<LegacyVar*> {
            auto* v = new LegacyVar(dtype_);
            // An unassigned variable of known shape has that shape and no
            // buffer, so Assign can validate against it.
            TensorShape shape;
            if (shape_.AsTensorShape(&shape)) {
              *v->tensor() = Tensor(dtype_, shape, RefPtr<TensorBuffer>());
            }
            return v;
          });
      OP_REQUIRES_OK(ctx, var.status());
      OP_REQUIRES(
          ctx, (*var)->dtype() == dtype_,
          errors::InvalidArgument("Variable '", name_.name, "' (container ", name_.container,
                                  ") already exists with dtype ", DataTypeString((*var)->dtype()),
                                  ", not ", DataTypeString(dtype_)));
      var_ = *std::move(var);
    }
    ctx->set_output_ref(0, var_->mu(), var_->tensor());
  }

 private:
  PartialTensorShape shape_;
  DataType dtype_;
  ResourceName name_;
  absl::Mutex mu_;
  RefPtr<LegacyVar> var_ ABSL_GUARDED_BY(mu_);
};

REGISTER_KERNEL_BUILDER(Name("VariableV2").Device(kDeviceCpu), VariableOp);
REGISTER_KERNEL_BUILDER(Name("Variable").Device(kDeviceCpu), VariableOp);

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_shape", &validate_shape_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(1);
    absl::MutexLock l(ctx->input_ref_mutex(0));
    Tensor* var = ctx->mutable_input(0);
    if (validate_shape_ && var->dtype() != DT_INVALID) {
      OP_REQUIRES(ctx, var->shape() == value.shape(),
                  errors::InvalidArgument("Assign requires shapes of both tensors to match. lhs "
                                          "shape= ",
                                          var->shape().DebugString(),
                                          " rhs shape= ", value.shape().DebugString()));
    }
    // Shares the value's buffer: every in-place writer copies a shared
    // buffer first (PrepareToUpdate).
    *var = value;
    ctx->forward_ref_input_to_ref_output(0, 0);
  }

 private:
  bool validate_shape_;
};

REGISTER_KERNEL_BUILDER(Name("Assign").Device(kDeviceCpu), AssignOp);

template <bool kAdd>
class AssignUpdateOp : public OpKernel {
 public:
  explicit AssignUpdateOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(1);
    {
      absl::MutexLock l(ctx->input_ref_mutex(0));
      Tensor* var = ctx->mutable_input(0);
      OP_REQUIRES(
          ctx, var->IsInitialized(),
          errors::FailedPrecondition("Attempting to use uninitialized value ", def().input(0)));
      OP_REQUIRES(ctx, var->shape() == value.shape(),
                  errors::InvalidArgument(type_string(),
                                          " requires shapes of both tensors to "
                                          "match. lhs shape= ",
                                          var->shape().DebugString(),
                                          " rhs shape= ", value.shape().DebugString()));
      PrepareToUpdate(var);
      VisitDataType(var->dtype(), [&](auto zero) {
        using T = decltype(zero);
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
          auto dst = var->flat<T>();
          auto src = value.flat<T>();
          for (size_t i = 0; i < dst.size(); ++i) {
            dst[i] = kAdd ? dst[i] + src[i] : dst[i] - src[i];
          }
        }
      });
    }
    ctx->forward_ref_input_to_ref_output(0, 0);
  }
};

REGISTER_KERNEL_BUILDER(
    Name("AssignAdd").Device(kDeviceCpu).TypeConstraint("T", VariableNumberTypes()),
    AssignUpdateOp<true>);
REGISTER_KERNEL_BUILDER(
    Name("AssignSub").Device(kDeviceCpu).TypeConstraint("T", VariableNumberTypes()),
    AssignUpdateOp<false>);

class IsVariableInitializedOp : public OpKernel {
 public:
  explicit IsVariableInitializedOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    bool initialized;
    {
      absl::ReaderMutexLock l(ctx->input_ref_mutex(0));
      initialized = ctx->mutable_input(0)->IsInitialized();
    }
    ctx->set_output(0, Tensor::Scalar<bool>(initialized));
  }
};

REGISTER_KERNEL_BUILDER(Name("IsVariableInitialized").Device(kDeviceCpu), IsVariableInitializedOp);

}  // namespace
}  // namespace distflow
