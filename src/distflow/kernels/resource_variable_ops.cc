// Kernels for resource variables. VarHandleOp outputs a handle (built once
// per kernel) carrying the declared dtype and shape; the variable itself is
// created by the first AssignVariableOp and lives in the device's
// ResourceMgr until destroyed. Reads share the variable's buffer; updates
// copy it first when a reader still holds it (see kernels/var.h).
#include <string>
#include <type_traits>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"
#include "distflow/kernels/var.h"

namespace distflow {
namespace {

class VarHandleOp : public OpKernel {
 public:
  explicit VarHandleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    ResourceName name;
    DtypeAndPartialTensorShape declared;
    OP_REQUIRES_OK(ctx, ResourceNameFromAttrs(ctx, &name));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &declared.dtype));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &declared.shape));
    ResourceHandle handle = MakeResourceHandle<Var>(ctx->device(), name.container, name.name);
    handle.set_dtypes_and_shapes({std::move(declared)});
    handle_ = Tensor(DT_RESOURCE, TensorShape());
    handle_.scalar<ResourceHandle>() = std::move(handle);
  }

  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, handle_); }

 private:
  Tensor handle_;
};

REGISTER_KERNEL_BUILDER(Name("VarHandleOp").Device(kDeviceCpu), VarHandleOp);

// InvalidArgument unless a variable of `actual` dtype may take part in an
// op on `wanted` values.
absl::Status CheckVariableDtype(const ResourceHandle& handle, DataType actual, DataType wanted,
                                absl::string_view what) {
  if (actual == wanted) return absl::OkStatus();
  return errors::InvalidArgument("Cannot ", what, " a ", DataTypeString(wanted), " value ",
                                 what == "read" ? "from" : "to", " variable '", handle.name(),
                                 "' of dtype ", DataTypeString(actual));
}

class ReadVariableOp : public OpKernel {
 public:
  explicit ReadVariableOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceHandle> handle = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, handle.status());
    absl::StatusOr<RefPtr<Var>> var = LookupVariable(ctx, *handle);
    OP_REQUIRES_OK(ctx, var.status());
    OP_REQUIRES_OK(ctx, CheckVariableDtype(*handle, (*var)->dtype(), dtype_, "read"));
    Tensor value;
    {
      absl::ReaderMutexLock l((*var)->mu());
      value = *(*var)->tensor();
    }
    OP_REQUIRES(ctx, value.IsInitialized(), UninitializedVariable(*handle));
    ctx->set_output(0, std::move(value));
  }

 private:
  DataType dtype_;
};

REGISTER_KERNEL_BUILDER(Name("ReadVariableOp").Device(kDeviceCpu), ReadVariableOp);

class AssignVariableOp : public OpKernel {
 public:
  explicit AssignVariableOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_shape", &validate_shape_));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceHandle> handle = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, handle.status());
    const Tensor& value = ctx->input(1);
    for (const DtypeAndPartialTensorShape& declared : handle->dtypes_and_shapes()) {
      if (declared.dtype != DT_INVALID) {
        OP_REQUIRES_OK(ctx, CheckVariableDtype(*handle, declared.dtype, dtype_, "assign"));
      }
      OP_REQUIRES(
          ctx, declared.shape.IsCompatibleWith(value.shape()),
          errors::InvalidArgument("Cannot assign a value of shape ", value.shape().DebugString(),
                                  " to variable '", handle->name(), "' declared with shape ",
                                  declared.shape.DebugString()));
    }
    const DataType dtype = dtype_;
    absl::StatusOr<RefPtr<Var>> var = LookupOrCreateResource<Var>(
        ctx, *handle, [dtype]() -> absl::StatusOr<Var*> { return new Var(dtype); });
    OP_REQUIRES_OK(ctx, var.status());
    OP_REQUIRES_OK(ctx, CheckVariableDtype(*handle, (*var)->dtype(), dtype_, "assign"));
    absl::MutexLock l((*var)->mu());
    Tensor* t = (*var)->tensor();
    if (validate_shape_ && t->IsInitialized()) {
      OP_REQUIRES(ctx, t->shape() == value.shape(),
                  errors::InvalidArgument("Cannot assign a value of shape ",
                                          value.shape().DebugString(), " to variable '",
                                          handle->name(), "' of shape ", t->shape().DebugString()));
    }
    // Shares the value's buffer; in-place updates copy it first.
    *t = value;
  }

 private:
  DataType dtype_;
  bool validate_shape_;
};

REGISTER_KERNEL_BUILDER(Name("AssignVariableOp").Device(kDeviceCpu), AssignVariableOp);

template <bool kAdd>
class AssignUpdateVariableOp : public OpKernel {
 public:
  explicit AssignUpdateVariableOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceHandle> handle = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, handle.status());
    const Tensor& value = ctx->input(1);
    absl::StatusOr<RefPtr<Var>> var = LookupVariable(ctx, *handle);
    OP_REQUIRES_OK(ctx, var.status());
    OP_REQUIRES_OK(ctx,
                   CheckVariableDtype(*handle, (*var)->dtype(), dtype_, kAdd ? "add" : "subtract"));
    absl::MutexLock l((*var)->mu());
    Tensor* t = (*var)->tensor();
    OP_REQUIRES(ctx, t->IsInitialized(), UninitializedVariable(*handle));
    OP_REQUIRES(ctx, t->shape() == value.shape(),
                errors::InvalidArgument("Cannot update variable '", handle->name(), "' of shape ",
                                        t->shape().DebugString(), " with a value of shape ",
                                        value.shape().DebugString()));
    PrepareToUpdate(t);
    VisitDataType(dtype_, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        auto dst = t->flat<T>();
        auto src = value.flat<T>();
        for (size_t i = 0; i < dst.size(); ++i) {
          dst[i] = kAdd ? dst[i] + src[i] : dst[i] - src[i];
        }
      }
    });
  }

 private:
  DataType dtype_;
};

REGISTER_KERNEL_BUILDER(
    Name("AssignAddVariableOp").Device(kDeviceCpu).TypeConstraint("dtype", VariableNumberTypes()),
    AssignUpdateVariableOp<true>);
REGISTER_KERNEL_BUILDER(
    Name("AssignSubVariableOp").Device(kDeviceCpu).TypeConstraint("dtype", VariableNumberTypes()),
    AssignUpdateVariableOp<false>);

class VarIsInitializedOp : public OpKernel {
 public:
  explicit VarIsInitializedOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceHandle> handle = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, handle.status());
    absl::StatusOr<RefPtr<Var>> var = LookupResource<Var>(ctx, *handle);
    bool initialized = false;
    if (var.ok()) {
      absl::ReaderMutexLock l((*var)->mu());
      initialized = (*var)->tensor()->IsInitialized();
    } else {
      OP_REQUIRES(ctx, absl::IsNotFound(var.status()), var.status());
    }
    ctx->set_output(0, Tensor::Scalar<bool>(initialized));
  }
};

REGISTER_KERNEL_BUILDER(Name("VarIsInitializedOp").Device(kDeviceCpu), VarIsInitializedOp);

class DestroyResourceOp : public OpKernel {
 public:
  explicit DestroyResourceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ignore_lookup_error", &ignore_lookup_error_));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceHandle> handle = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, handle.status());
    OP_REQUIRES(ctx, handle->device().empty() || handle->device() == ctx->device()->name(),
                errors::InvalidArgument("Resource '", handle->name(), "' lives on device ",
                                        handle->device(), " but is destroyed from device ",
                                        ctx->device()->name()));
    absl::StatusOr<ResourceMgr*> rm = GetResourceMgr(ctx->device());
    OP_REQUIRES_OK(ctx, rm.status());
    const absl::Status s = (*rm)->Delete(*handle);
    if (ignore_lookup_error_ && absl::IsNotFound(s)) return;
    OP_REQUIRES_OK(ctx, s);
  }

 private:
  bool ignore_lookup_error_;
};

REGISTER_KERNEL_BUILDER(Name("DestroyResourceOp").Device(kDeviceCpu), DestroyResourceOp);

// The values of an int32 or int64 index tensor, each checked against
// [0, limit); InvalidArgument naming the first one outside.
absl::Status ReadIndices(const Tensor& indices, int64_t limit, std::vector<int64_t>* out) {
  out->clear();
  out->reserve(indices.NumElements());
  if (indices.dtype() == DT_INT32) {
    for (int32_t v : indices.flat<int32_t>()) out->push_back(v);
  } else {
    for (int64_t v : indices.flat<int64_t>()) out->push_back(v);
  }
  for (size_t i = 0; i < out->size(); ++i) {
    if ((*out)[i] < 0 || (*out)[i] >= limit) {
      return errors::InvalidArgument("indices[", i, "] = ", (*out)[i], " is not in [0, ", limit,
                                     ")");
    }
  }
  return absl::OkStatus();
}

class ResourceGatherOp : public OpKernel {
 public:
  explicit ResourceGatherOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    int64_t batch_dims;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("batch_dims", &batch_dims));
    OP_REQUIRES(
        ctx, batch_dims == 0,
        errors::Unimplemented("ResourceGather supports batch_dims 0 only, got ", batch_dims));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceHandle> handle = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, handle.status());
    absl::StatusOr<RefPtr<Var>> var = LookupVariable(ctx, *handle);
    OP_REQUIRES_OK(ctx, var.status());
    OP_REQUIRES_OK(ctx, CheckVariableDtype(*handle, (*var)->dtype(), dtype_, "read"));
    Tensor params;
    {
      absl::ReaderMutexLock l((*var)->mu());
      params = *(*var)->tensor();
    }
    OP_REQUIRES(ctx, params.IsInitialized(), UninitializedVariable(*handle));
    OP_REQUIRES(
        ctx, params.dims() >= 1,
        errors::InvalidArgument("ResourceGather needs a variable of rank >= 1, '", handle->name(),
                                "' has shape ", params.shape().DebugString()));
    const Tensor& indices = ctx->input(1);
    std::vector<int64_t> ix;
    OP_REQUIRES_OK(ctx,
                   errors::Annotate(ReadIndices(indices, params.dim_size(0), &ix),
                                    absl::StrCat("ResourceGather on '", handle->name(), "': ")));
    TensorShape shape = indices.shape();
    int64_t inner = 1;
    for (int d = 1; d < params.dims(); ++d) {
      OP_REQUIRES_OK(ctx, shape.AddDimWithStatus(params.dim_size(d)));
      inner *= params.dim_size(d);
    }
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;
    GatherRows(dtype_, params.raw_data(), 1, 1, params.dim_size(0), inner, ix.data(),
               static_cast<int64_t>(ix.size()), out->raw_data());
  }

 private:
  DataType dtype_;
};

REGISTER_KERNEL_BUILDER(
    Name("ResourceGather").Device(kDeviceCpu).TypeConstraint("dtype", ArrayKernelTypes()),
    ResourceGatherOp);

class ResourceScatterAddOp : public OpKernel {
 public:
  explicit ResourceScatterAddOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceHandle> handle = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, handle.status());
    absl::StatusOr<RefPtr<Var>> var = LookupVariable(ctx, *handle);
    OP_REQUIRES_OK(ctx, var.status());
    OP_REQUIRES_OK(ctx, CheckVariableDtype(*handle, (*var)->dtype(), dtype_, "add"));
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    absl::MutexLock l((*var)->mu());
    Tensor* t = (*var)->tensor();
    OP_REQUIRES(ctx, t->IsInitialized(), UninitializedVariable(*handle));
    OP_REQUIRES(ctx, t->dims() >= 1,
                errors::InvalidArgument("ResourceScatterAdd needs a variable of rank "
                                        ">= 1, '",
                                        handle->name(), "' has shape ", t->shape().DebugString()));
    TensorShape expected = indices.shape();
    int64_t inner = 1;
    for (int d = 1; d < t->dims(); ++d) {
      expected.AddDim(t->dim_size(d));
      inner *= t->dim_size(d);
    }
    const bool scalar_update = updates.dims() == 0;
    OP_REQUIRES(ctx, scalar_update || updates.shape() == expected,
                errors::InvalidArgument("ResourceScatterAdd on '", handle->name(), "' of shape ",
                                        t->shape().DebugString(), " with indices of shape ",
                                        indices.shape().DebugString(), " needs updates of shape ",
                                        expected.DebugString(), " (or a scalar), got ",
                                        updates.shape().DebugString()));
    std::vector<int64_t> ix;
    OP_REQUIRES_OK(
        ctx, errors::Annotate(ReadIndices(indices, t->dim_size(0), &ix),
                              absl::StrCat("ResourceScatterAdd on '", handle->name(), "': ")));
    PrepareToUpdate(t);
    VisitDataType(dtype_, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        T* dst = t->base<T>();
        const T* src = updates.base<T>();
        for (size_t i = 0; i < ix.size(); ++i) {
          T* row = dst + ix[i] * inner;
          for (int64_t k = 0; k < inner; ++k) {
            row[k] += scalar_update ? src[0] : src[i * inner + k];
          }
        }
      }
    });
  }

 private:
  DataType dtype_;
};

REGISTER_KERNEL_BUILDER(
    Name("ResourceScatterAdd").Device(kDeviceCpu).TypeConstraint("dtype", VariableNumberTypes()),
    ResourceScatterAddOp);

}  // namespace
}  // namespace distflow
