// Kernels for the unary math ops (Neg, Abs, Sign, Square, Sqrt, Rsqrt, Exp,
// Log, Tanh, Sigmoid, Reciprocal, Floor, Ceil, Round, Sin, Cos, Log1p, Expm1,
// Erf) and the gradient helpers SigmoidGrad,
// TanhGrad, SqrtGrad and RsqrtGrad, which take the forward op's output y and
// the incoming gradient dy.

// GCC 12 reports false "may be used uninitialized" warnings inside the
// AVX-512 intrinsics that Eigen's vectorized math inlines.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <unsupported/Eigen/SpecialFunctions>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/cwise_ops.h"

namespace distflow {
namespace {

#define DF_EIGEN_UNARY_FN(name, expr)   \
  struct name {                         \
    template <typename A>               \
    auto operator()(const A& x) const { \
      return expr;                      \
    }                                   \
  }

DF_EIGEN_UNARY_FN(NegFn, -x);
DF_EIGEN_UNARY_FN(AbsFn, x.abs());
DF_EIGEN_UNARY_FN(SignFn, x.sign());
DF_EIGEN_UNARY_FN(SquareFn, x.square());
DF_EIGEN_UNARY_FN(SqrtFn, x.sqrt());
DF_EIGEN_UNARY_FN(RsqrtFn, x.rsqrt());
DF_EIGEN_UNARY_FN(ExpFn, x.exp());
DF_EIGEN_UNARY_FN(FloorFn, x.floor());
DF_EIGEN_UNARY_FN(LogFn, x.log());
DF_EIGEN_UNARY_FN(TanhFn, x.tanh());
DF_EIGEN_UNARY_FN(SigmoidFn, x.logistic());
DF_EIGEN_UNARY_FN(ReciprocalFn, x.inverse());
DF_EIGEN_UNARY_FN(CeilFn, x.ceil());
// rint rounds halves to even (the default rounding mode), as TensorFlow's
// Round does; Eigen's round() would take them away from zero.
DF_EIGEN_UNARY_FN(RoundFn, x.rint());
DF_EIGEN_UNARY_FN(SinFn, x.sin());
DF_EIGEN_UNARY_FN(CosFn, x.cos());
DF_EIGEN_UNARY_FN(Log1pFn, x.log1p());
DF_EIGEN_UNARY_FN(Expm1Fn, x.expm1());
DF_EIGEN_UNARY_FN(ErfFn, x.erf());

#undef DF_EIGEN_UNARY_FN

struct SigmoidGradFn {
  template <typename C>
  C operator()(C y, C dy) const {
    return dy * y * (C(1) - y);
  }
};
struct TanhGradFn {
  template <typename C>
  C operator()(C y, C dy) const {
    return dy * (C(1) - y * y);
  }
};
struct SqrtGradFn {
  template <typename C>
  C operator()(C y, C dy) const {
    return C(0.5) * dy / y;
  }
};
struct RsqrtGradFn {
  template <typename C>
  C operator()(C y, C dy) const {
    return C(-0.5) * dy * y * y * y;
  }
};

#define DF_REGISTER_UNARY(name, F, T, cost) \
  REGISTER_KERNEL_BUILDER(Name(name).Device(kDeviceCpu).TypeConstraint<T>("T"), UnaryOp<T, F, cost>)
#define DF_REGISTER_UNARY_FLOATS(name, F, cost) \
  DF_REGISTER_UNARY(name, F, float, cost);      \
  DF_REGISTER_UNARY(name, F, double, cost);     \
  DF_REGISTER_UNARY(name, F, bfloat16, cost)
#define DF_REGISTER_UNARY_NUMBERS(name, F, cost) \
  DF_REGISTER_UNARY_FLOATS(name, F, cost);       \
  DF_REGISTER_UNARY(name, F, int32_t, cost);     \
  DF_REGISTER_UNARY(name, F, int64_t, cost)

DF_REGISTER_UNARY_NUMBERS("Neg", NegFn, kCheapElementCost);
DF_REGISTER_UNARY_NUMBERS("Abs", AbsFn, kCheapElementCost);
DF_REGISTER_UNARY_NUMBERS("Sign", SignFn, kCheapElementCost);
DF_REGISTER_UNARY_NUMBERS("Square", SquareFn, kCheapElementCost);
DF_REGISTER_UNARY_FLOATS("Sqrt", SqrtFn, kCheapElementCost);
DF_REGISTER_UNARY_FLOATS("Rsqrt", RsqrtFn, kCheapElementCost);
DF_REGISTER_UNARY_FLOATS("Exp", ExpFn, kTranscendentalElementCost);
DF_REGISTER_UNARY_FLOATS("Log", LogFn, kTranscendentalElementCost);
DF_REGISTER_UNARY_FLOATS("Tanh", TanhFn, kTranscendentalElementCost);
DF_REGISTER_UNARY_FLOATS("Floor", FloorFn, kCheapElementCost);
DF_REGISTER_UNARY_FLOATS("Sigmoid", SigmoidFn, kTranscendentalElementCost);
DF_REGISTER_UNARY_FLOATS("Reciprocal", ReciprocalFn, kCheapElementCost);
DF_REGISTER_UNARY_FLOATS("Ceil", CeilFn, kCheapElementCost);
DF_REGISTER_UNARY_FLOATS("Round", RoundFn, kCheapElementCost);
DF_REGISTER_UNARY_FLOATS("Sin", SinFn, kTranscendentalElementCost);
DF_REGISTER_UNARY_FLOATS("Cos", CosFn, kTranscendentalElementCost);
DF_REGISTER_UNARY_FLOATS("Log1p", Log1pFn, kTranscendentalElementCost);
DF_REGISTER_UNARY_FLOATS("Expm1", Expm1Fn, kTranscendentalElementCost);
DF_REGISTER_UNARY_FLOATS("Erf", ErfFn, kTranscendentalElementCost);

#define DF_REGISTER_UNARY_GRAD(name, F)                                                \
  REGISTER_KERNEL_BUILDER(Name(name).Device(kDeviceCpu).TypeConstraint<float>("T"),    \
                          UnaryGradOp<float, F>);                                      \
  REGISTER_KERNEL_BUILDER(Name(name).Device(kDeviceCpu).TypeConstraint<double>("T"),   \
                          UnaryGradOp<double, F>);                                     \
  REGISTER_KERNEL_BUILDER(Name(name).Device(kDeviceCpu).TypeConstraint<bfloat16>("T"), \
                          UnaryGradOp<bfloat16, F>)

DF_REGISTER_UNARY_GRAD("SigmoidGrad", SigmoidGradFn);
DF_REGISTER_UNARY_GRAD("TanhGrad", TanhGradFn);
DF_REGISTER_UNARY_GRAD("SqrtGrad", SqrtGradFn);
DF_REGISTER_UNARY_GRAD("RsqrtGrad", RsqrtGradFn);

#undef DF_REGISTER_UNARY_GRAD
#undef DF_REGISTER_UNARY_NUMBERS
#undef DF_REGISTER_UNARY_FLOATS
#undef DF_REGISTER_UNARY

}  // namespace
}  // namespace distflow
