// Optimizer update kernels, one class per algorithm serving both forms: the
// ref form (ApplyX: variable and slots are Ref inputs, the variable passes
// through as output) and the resource form (ResourceApplyX: handles). The
// variable and its slots are locked together for the whole update (in
// address order, see MultiMutexLock) and copied first when a reader still
// shares their buffers. Formulas are TensorFlow's, computed in T.
#include <cmath>
#include <initializer_list>
#include <memory>
#include <vector>

#include "Eigen/Core"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/var.h"

namespace distflow {
namespace {

// The variables an update changes (Ref or resource inputs), held locked.
class UpdateTargets {
 public:
  // Looks up and locks the variables of `inputs`; FailedPrecondition naming
  // the variable when one is uninitialized, InvalidArgument when a resource
  // variable's dtype is not `dtype`.
  absl::Status Init(OpKernelContext* ctx, std::initializer_list<int> inputs, DataType dtype) {
    std::vector<absl::Mutex*> mutexes;
    std::vector<std::string> names;
    for (int i : inputs) {
      if (ctx->input_dtype(i) == DT_RESOURCE) {
        DF_ASSIGN_OR_RETURN(ResourceHandle handle, HandleFromInput(ctx, i));
        DF_ASSIGN_OR_RETURN(RefPtr<Var> var, LookupVariable(ctx, handle));
        if (var->dtype() != dtype) {
          return errors::InvalidArgument(
              "variable '", handle.name(), "' is ", DataTypeString(var->dtype()), " but ",
              ctx->op_kernel().type_string(), " updates ", DataTypeString(dtype));
        }
        mutexes.push_back(var->mu());
        tensors_.push_back(var->tensor());
        uninitialized_.push_back(UninitializedVariable(handle));
        vars_.push_back(std::move(var));
      } else {
        mutexes.push_back(ctx->input_ref_mutex(i));
        tensors_.push_back(ctx->mutable_input(i));
        uninitialized_.push_back(errors::FailedPrecondition(
            "Attempting to use uninitialized value ", ctx->op_kernel().def().input(i)));
      }
    }
    lock_ = std::make_unique<MultiMutexLock>(std::move(mutexes));
    for (size_t k = 0; k < tensors_.size(); ++k) {
      if (!tensors_[k]->IsInitialized()) return uninitialized_[k];
    }
    return absl::OkStatus();
  }

  Tensor* get(int k) const { return tensors_[k]; }

  // Copies shared buffers so every target may be updated in place.
  void PrepareAll() {
    for (Tensor* t : tensors_) PrepareToUpdate(t);
  }

 private:
  std::vector<RefPtr<Var>> vars_;  // keeps resource variables alive
  std::vector<Tensor*> tensors_;
  std::vector<absl::Status> uninitialized_;
  std::unique_ptr<MultiMutexLock> lock_;
};

// InvalidArgument unless input `i`, called `name`, is a scalar.
absl::Status CheckScalar(OpKernelContext* ctx, int i, absl::string_view name) {
  const Tensor& t = ctx->input(i);
  if (t.dims() == 0) return absl::OkStatus();
  return errors::InvalidArgument(name, " is not a scalar: ", t.shape().DebugString());
}

// InvalidArgument naming both shapes unless `t` has the variable's shape.
absl::Status CheckSameShape(const Tensor& var, const Tensor& t, absl::string_view what) {
  if (var.shape() == t.shape()) return absl::OkStatus();
  return errors::InvalidArgument("var and ", what, " do not have the same shape: var ",
                                 var.shape().DebugString(), ", ", what, " ",
                                 t.shape().DebugString());
}

template <typename T>
class ApplyGradientDescentOp : public OpKernel {
 public:
  explicit ApplyGradientDescentOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckScalar(ctx, 1, "alpha"));
    const T alpha = ctx->input(1).scalar<T>();
    const Tensor& delta = ctx->input(2);
    {
      UpdateTargets targets;
      OP_REQUIRES_OK(ctx, targets.Init(ctx, {0}, DataTypeToEnum<T>::value));
      OP_REQUIRES_OK(ctx, CheckSameShape(*targets.get(0), delta, "delta"));
      targets.PrepareAll();
      auto var = targets.get(0)->flat<T>();
      auto d = delta.flat<T>();
      for (size_t i = 0; i < var.size(); ++i) var[i] -= alpha * d[i];
    }
    if (num_outputs() > 0) ctx->forward_ref_input_to_ref_output(0, 0);
  }
};

template <typename T>
class ApplyMomentumOp : public OpKernel {
 public:
  explicit ApplyMomentumOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("use_nesterov", &use_nesterov_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckScalar(ctx, 2, "lr"));
    OP_REQUIRES_OK(ctx, CheckScalar(ctx, 4, "momentum"));
    const T lr = ctx->input(2).scalar<T>();
    const Tensor& grad = ctx->input(3);
    const T momentum = ctx->input(4).scalar<T>();
    {
      UpdateTargets targets;
      OP_REQUIRES_OK(ctx, targets.Init(ctx, {0, 1}, DataTypeToEnum<T>::value));
      OP_REQUIRES_OK(ctx, CheckSameShape(*targets.get(0), *targets.get(1), "accum"));
      OP_REQUIRES_OK(ctx, CheckSameShape(*targets.get(0), grad, "grad"));
      targets.PrepareAll();
      auto var = targets.get(0)->flat<T>();
      auto accum = targets.get(1)->flat<T>();
      auto g = grad.flat<T>();
      for (size_t i = 0; i < var.size(); ++i) {
        accum[i] = accum[i] * momentum + g[i];
        if (use_nesterov_) {
          var[i] -= g[i] * lr + accum[i] * momentum * lr;
        } else {
          var[i] -= lr * accum[i];
        }
      }
    }
    if (num_outputs() > 0) ctx->forward_ref_input_to_ref_output(0, 0);
  }

 private:
  bool use_nesterov_;
};

template <typename T>
class ApplyAdamOp : public OpKernel {
 public:
  explicit ApplyAdamOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("use_nesterov", &use_nesterov_));
  }

  void Compute(OpKernelContext* ctx) override {
    static constexpr const char* kScalars[] = {"beta1_power", "beta2_power", "lr",
                                               "beta1",       "beta2",       "epsilon"};
    for (int i = 3; i <= 8; ++i) {
      OP_REQUIRES_OK(ctx, CheckScalar(ctx, i, kScalars[i - 3]));
    }
    const T beta1_power = ctx->input(3).scalar<T>();
    const T beta2_power = ctx->input(4).scalar<T>();
    const T lr = ctx->input(5).scalar<T>();
    const T beta1 = ctx->input(6).scalar<T>();
    const T beta2 = ctx->input(7).scalar<T>();
    const T epsilon = ctx->input(8).scalar<T>();
    const Tensor& grad = ctx->input(9);
    const T lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    {
      UpdateTargets targets;
      OP_REQUIRES_OK(ctx, targets.Init(ctx, {0, 1, 2}, DataTypeToEnum<T>::value));
      OP_REQUIRES_OK(ctx, CheckSameShape(*targets.get(0), *targets.get(1), "m"));
      OP_REQUIRES_OK(ctx, CheckSameShape(*targets.get(0), *targets.get(2), "v"));
      OP_REQUIRES_OK(ctx, CheckSameShape(*targets.get(0), grad, "grad"));
      targets.PrepareAll();
      // Whole-array expressions: Eigen vectorizes the square roots and
      // divisions, which an element loop over four tensors that might alias
      // does not get (the update was 36 % of a parameter server's CPU).
      using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
      const Eigen::Index n = static_cast<Eigen::Index>(grad.NumElements());
      Eigen::Map<Array> var(targets.get(0)->flat<T>().data(), n);
      Eigen::Map<Array> m(targets.get(1)->flat<T>().data(), n);
      Eigen::Map<Array> v(targets.get(2)->flat<T>().data(), n);
      Eigen::Map<const Array> g(grad.flat<T>().data(), n);
      m += (g - m) * (T(1) - beta1);
      v += (g.square() - v) * (T(1) - beta2);
      if (use_nesterov_) {
        var -= (g * (T(1) - beta1) + beta1 * m) * lr_t / (v.sqrt() + epsilon);
      } else {
        var -= m * lr_t / (v.sqrt() + epsilon);
      }
    }
    if (num_outputs() > 0) ctx->forward_ref_input_to_ref_output(0, 0);
  }

 private:
  bool use_nesterov_;
};

#define DF_REGISTER_APPLY(OP, KERNEL, T) \
  REGISTER_KERNEL_BUILDER(Name(OP).Device(kDeviceCpu).TypeConstraint<T>("T"), KERNEL<T>)
#define DF_REGISTER_APPLY_BOTH_FORMS(OP, KERNEL, T) \
  DF_REGISTER_APPLY(OP, KERNEL, T);                 \
  DF_REGISTER_APPLY("Resource" OP, KERNEL, T)

DF_REGISTER_APPLY_BOTH_FORMS("ApplyGradientDescent", ApplyGradientDescentOp, float);
DF_REGISTER_APPLY_BOTH_FORMS("ApplyGradientDescent", ApplyGradientDescentOp, double);
DF_REGISTER_APPLY_BOTH_FORMS("ApplyMomentum", ApplyMomentumOp, float);
DF_REGISTER_APPLY_BOTH_FORMS("ApplyMomentum", ApplyMomentumOp, double);
DF_REGISTER_APPLY_BOTH_FORMS("ApplyAdam", ApplyAdamOp, float);
DF_REGISTER_APPLY_BOTH_FORMS("ApplyAdam", ApplyAdamOp, double);

#undef DF_REGISTER_APPLY_BOTH_FORMS
#undef DF_REGISTER_APPLY

}  // namespace
}  // namespace distflow
