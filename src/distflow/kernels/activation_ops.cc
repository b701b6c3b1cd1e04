// CPU kernels for the elementwise activations Relu, Relu6, Elu and Softplus
// and their gradients, for float, double and bfloat16 (computed in float).
// NaN inputs propagate to the outputs.
#include <cmath>
#include <string>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/nn_kernel_util.h"

namespace distflow {
namespace {

// Activations: y = f(x).
struct ReluFn {
  static constexpr int64_t kCost = 2;
  template <typename C>
  C operator()(C x) const {
    return x < C(0) ? C(0) : x;
  }
};

struct Relu6Fn {
  static constexpr int64_t kCost = 3;
  template <typename C>
  C operator()(C x) const {
    return x < C(0) ? C(0) : (x > C(6) ? C(6) : x);
  }
};

struct EluFn {
  static constexpr int64_t kCost = 30;
  template <typename C>
  C operator()(C x) const {
    return x < C(0) ? std::expm1(x) : x;
  }
};

// log(1 + exp(x)) without overflow for large x or underflow to 0 for small x.
struct SoftplusFn {
  static constexpr int64_t kCost = 60;
  template <typename C>
  C operator()(C x) const {
    return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};

// Gradients: backprop = g(gradient, x) where x is the second input
// (features, or for Elu its outputs).
struct ReluGradFn {
  static constexpr int64_t kCost = 2;
  template <typename C>
  C operator()(C g, C x) const {
    return x > C(0) ? g : C(0);
  }
};

struct Relu6GradFn {
  static constexpr int64_t kCost = 3;
  template <typename C>
  C operator()(C g, C x) const {
    return x > C(0) && x < C(6) ? g : C(0);
  }
};

// Elu's derivative from its output y: exp(x) = y + 1 where x < 0.
struct EluGradFn {
  static constexpr int64_t kCost = 3;
  template <typename C>
  C operator()(C g, C y) const {
    return y < C(0) ? g * (y + C(1)) : g;
  }
};

// Softplus's derivative is the sigmoid of the features.
struct SoftplusGradFn {
  static constexpr int64_t kCost = 30;
  template <typename C>
  C operator()(C g, C x) const {
    return g / (C(1) + std::exp(-x));
  }
};

template <typename T, typename Fn>
class ActivationOp : public OpKernel {
 public:
  explicit ActivationOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    using C = nn::ComputeType<T>;
    const Tensor& in = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, in.shape(), &out));
    const T* x = in.base<T>();
    T* y = out->base<T>();
    nn::ParallelFor(ctx, in.NumElements(), Fn::kCost, [x, y](int64_t begin, int64_t end) {
      const Fn fn;
      for (int64_t i = begin; i < end; ++i) {
        y[i] = static_cast<T>(fn(static_cast<C>(x[i])));
      }
    });
  }
};

template <typename T, typename Fn>
class ActivationGradOp : public OpKernel {
 public:
  explicit ActivationGradOp(OpKernelConstruction* ctx)
      : OpKernel(ctx), second_input_(ctx->op_def().input_arg(1).name()) {}

  void Compute(OpKernelContext* ctx) override {
    using C = nn::ComputeType<T>;
    const Tensor& grad = ctx->input(0);
    const Tensor& x_in = ctx->input(1);
    OP_REQUIRES(ctx, grad.shape() == x_in.shape(),
                errors::InvalidArgument("gradients and ", second_input_,
                                        " must have the same shape, got gradients shape ",
                                        grad.shape().DebugString(), " and ", second_input_,
                                        " shape ", x_in.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, grad.shape(), &out));
    const T* g = grad.base<T>();
    const T* x = x_in.base<T>();
    T* y = out->base<T>();
    nn::ParallelFor(ctx, grad.NumElements(), Fn::kCost, [g, x, y](int64_t begin, int64_t end) {
      const Fn fn;
      for (int64_t i = begin; i < end; ++i) {
        y[i] = static_cast<T>(fn(static_cast<C>(g[i]), static_cast<C>(x[i])));
      }
    });
  }

 private:
  const std::string second_input_;  // "features" or "outputs", for errors
};

#define DF_REGISTER_ACTIVATIONS(T)                                                        \
  REGISTER_KERNEL_BUILDER(Name("Relu").Device(kDeviceCpu).TypeConstraint<T>("T"),         \
                          ActivationOp<T, ReluFn>);                                       \
  REGISTER_KERNEL_BUILDER(Name("Relu6").Device(kDeviceCpu).TypeConstraint<T>("T"),        \
                          ActivationOp<T, Relu6Fn>);                                      \
  REGISTER_KERNEL_BUILDER(Name("Elu").Device(kDeviceCpu).TypeConstraint<T>("T"),          \
                          ActivationOp<T, EluFn>);                                        \
  REGISTER_KERNEL_BUILDER(Name("Softplus").Device(kDeviceCpu).TypeConstraint<T>("T"),     \
                          ActivationOp<T, SoftplusFn>);                                   \
  REGISTER_KERNEL_BUILDER(Name("ReluGrad").Device(kDeviceCpu).TypeConstraint<T>("T"),     \
                          ActivationGradOp<T, ReluGradFn>);                               \
  REGISTER_KERNEL_BUILDER(Name("Relu6Grad").Device(kDeviceCpu).TypeConstraint<T>("T"),    \
                          ActivationGradOp<T, Relu6GradFn>);                              \
  REGISTER_KERNEL_BUILDER(Name("EluGrad").Device(kDeviceCpu).TypeConstraint<T>("T"),      \
                          ActivationGradOp<T, EluGradFn>);                                \
  REGISTER_KERNEL_BUILDER(Name("SoftplusGrad").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                          ActivationGradOp<T, SoftplusGradFn>)

DF_REGISTER_ACTIVATIONS(float);
DF_REGISTER_ACTIVATIONS(double);
DF_REGISTER_ACTIVATIONS(bfloat16);

#undef DF_REGISTER_ACTIVATIONS

}  // namespace
}  // namespace distflow
