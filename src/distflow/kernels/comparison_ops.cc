// Kernels for the broadcasting comparisons (Equal, NotEqual, Less, LessEqual,
// Greater, GreaterEqual), which output bool, and the logical ops LogicalAnd,
// LogicalOr (broadcasting) and LogicalNot. With incompatible_shape_error
// false, Equal and NotEqual answer a scalar false / true for shapes that do
// not broadcast instead of failing.
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/cwise_ops.h"

namespace distflow {
namespace {

#define DF_COMPARISON_FN(name, op)                  \
  struct name {                                     \
    template <typename C>                           \
    bool operator()(const C& a, const C& b) const { \
      return a op b;                                \
    }                                               \
  }
DF_COMPARISON_FN(EqualFn, ==);
DF_COMPARISON_FN(NotEqualFn, !=);
DF_COMPARISON_FN(LessFn, <);
DF_COMPARISON_FN(LessEqualFn, <=);
DF_COMPARISON_FN(GreaterFn, >);
DF_COMPARISON_FN(GreaterEqualFn, >=);
DF_COMPARISON_FN(LogicalAndFn, &&);
DF_COMPARISON_FN(LogicalOrFn, ||);
#undef DF_COMPARISON_FN

struct LogicalNotFn {
  template <typename A>
  auto operator()(const A& x) const {
    return !x;
  }
};

// Equal / NotEqual: `kIncompatible` is the answer for shapes that cannot
// broadcast when incompatible_shape_error is false.
template <typename T, typename F, bool kIncompatible>
class EqualityOp : public OpKernel {
 public:
  explicit EqualityOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("incompatible_shape_error", &incompatible_shape_error_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    BroadcastPlan plan;
    absl::Status s = BroadcastPlan::Make({x.shape(), y.shape()}, &plan);
    Tensor* z = nullptr;
    if (!s.ok() && !incompatible_shape_error_) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &z));
      z->scalar<bool>() = kIncompatible;
      return;
    }
    OP_REQUIRES_OK(ctx, s);
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, plan.output_shape(), &z));
    if (plan.num_elements() == 0) return;
    ComputeBroadcastBinary<F, T, bool>(ctx, plan, x, y, z, kCheapElementCost);
  }

 private:
  bool incompatible_shape_error_ = true;
};

#define DF_REGISTER_COMPARISON(name, F, T)                                      \
  REGISTER_KERNEL_BUILDER(Name(name).Device(kDeviceCpu).TypeConstraint<T>("T"), \
                          BinaryOp<T, F, bool>)
#define DF_REGISTER_COMPARISON_NUMBERS(name, F) \
  DF_REGISTER_COMPARISON(name, F, float);       \
  DF_REGISTER_COMPARISON(name, F, double);      \
  DF_REGISTER_COMPARISON(name, F, int32_t);     \
  DF_REGISTER_COMPARISON(name, F, int64_t);     \
  DF_REGISTER_COMPARISON(name, F, bfloat16)

DF_REGISTER_COMPARISON_NUMBERS("Less", LessFn);
DF_REGISTER_COMPARISON_NUMBERS("LessEqual", LessEqualFn);
DF_REGISTER_COMPARISON_NUMBERS("Greater", GreaterFn);
DF_REGISTER_COMPARISON_NUMBERS("GreaterEqual", GreaterEqualFn);

#define DF_REGISTER_EQUALITY(name, F, T, incompatible)                          \
  REGISTER_KERNEL_BUILDER(Name(name).Device(kDeviceCpu).TypeConstraint<T>("T"), \
                          EqualityOp<T, F, incompatible>)
#define DF_REGISTER_EQUALITY_TYPES(name, F, incompatible) \
  DF_REGISTER_EQUALITY(name, F, float, incompatible);     \
  DF_REGISTER_EQUALITY(name, F, double, incompatible);    \
  DF_REGISTER_EQUALITY(name, F, int32_t, incompatible);   \
  DF_REGISTER_EQUALITY(name, F, int64_t, incompatible);   \
  DF_REGISTER_EQUALITY(name, F, bfloat16, incompatible);  \
  DF_REGISTER_EQUALITY(name, F, bool, incompatible);      \
  DF_REGISTER_EQUALITY(name, F, std::string, incompatible)

DF_REGISTER_EQUALITY_TYPES("Equal", EqualFn, false);
DF_REGISTER_EQUALITY_TYPES("NotEqual", NotEqualFn, true);

REGISTER_KERNEL_BUILDER(Name("LogicalAnd").Device(kDeviceCpu), BinaryOp<bool, LogicalAndFn>);
REGISTER_KERNEL_BUILDER(Name("LogicalOr").Device(kDeviceCpu), BinaryOp<bool, LogicalOrFn>);
REGISTER_KERNEL_BUILDER(Name("LogicalNot").Device(kDeviceCpu), UnaryOp<bool, LogicalNotFn>);

#undef DF_REGISTER_EQUALITY_TYPES
#undef DF_REGISTER_EQUALITY
#undef DF_REGISTER_COMPARISON_NUMBERS
#undef DF_REGISTER_COMPARISON

}  // namespace
}  // namespace distflow
