// Building blocks of the elementwise kernels: the loops that apply a functor
// over broadcast operands, the kernels for binary ops (with broadcasting),
// unary ops and unary-gradient ops, and the sharding of large element ranges
// over the device's intra-op pool.
//
// A binary functor is a default-constructible struct with
//   template <typename C> R operator()(C x, C y) const;
// called with ComputeType<T> values (bfloat16 computes in float) and whose
// result is converted to the output type. A functor may also define
//   static absl::Status Validate(const Tensor& x, const Tensor& y);
// to reject inputs before any output is written (integer division by zero).
// Kernels are stateless after construction, so Compute is thread-safe.
#ifndef DISTFLOW_KERNELS_CWISE_OPS_H_
#define DISTFLOW_KERNELS_CWISE_OPS_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "Eigen/Core"
#include "absl/functional/function_ref.h"
#include "distflow/core/status.h"
#include "distflow/core/threadpool.h"
#include "distflow/framework/op_kernel.h"
#include "distflow/kernels/broadcast.h"

namespace distflow {

// The type arithmetic on T is carried out in: bfloat16 widens to float.
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<bfloat16> {
  using type = float;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

// Roughly the cycles one element of a cheap elementwise op costs; used to
// decide how finely to shard.
inline constexpr int64_t kCheapElementCost = 2;
inline constexpr int64_t kTranscendentalElementCost = 20;

// Below this many cycles of work a hand-off to other threads costs more than
// it saves.
inline constexpr int64_t kMinParallelCost = 100000;

// Calls fn(begin, end) over [0, n): inline when the work is small or there is
// no intra-op pool, else in parallel shards on the pool.
void ShardElementwise(OpKernelContext* ctx, int64_t n, int64_t cost_per_element,
                      absl::FunctionRef<void(int64_t, int64_t)> fn);

// z[i] = f(x[i * sx], y[i * sy]) for i in [0, n), with sx, sy in {0, 1}.
// z may alias x or y when that operand's stride is 1.
template <typename F, typename In, typename Out>
inline void BinarySegment(const In* x, int64_t sx, const In* y, int64_t sy, Out* z, int64_t n) {
  using C = ComputeType<In>;
  const F f;
  if (sx != 0 && sy != 0) {
    for (int64_t i = 0; i < n; ++i) {
      z[i] = static_cast<Out>(f(static_cast<C>(x[i]), static_cast<C>(y[i])));
    }
  } else if (sx != 0) {
    const C yv = static_cast<C>(y[0]);
    for (int64_t i = 0; i < n; ++i) {
      z[i] = static_cast<Out>(f(static_cast<C>(x[i]), yv));
    }
  } else if (sy != 0) {
    const C xv = static_cast<C>(x[0]);
    for (int64_t i = 0; i < n; ++i) {
      z[i] = static_cast<Out>(f(xv, static_cast<C>(y[i])));
    }
  } else {
    const Out v = static_cast<Out>(f(static_cast<C>(x[0]), static_cast<C>(y[0])));
    std::fill(z, z + n, v);
  }
}

// Computes z = f(x, y) elementwise under `plan` (built from x and y).
// REQUIRES: z has plan.output_shape() and dtype Out.
template <typename F, typename In, typename Out>
void ComputeBroadcastBinary(OpKernelContext* ctx, const BroadcastPlan& plan, const Tensor& x,
                            const Tensor& y, Tensor* z, int64_t cost_per_element) {
  const In* px = x.base<In>();
  const In* py = y.base<In>();
  Out* pz = z->base<Out>();
  const int64_t sx = plan.inner_stride(0), sy = plan.inner_stride(1);
  ShardElementwise(ctx, plan.num_elements(), cost_per_element, [&](int64_t begin, int64_t end) {
    plan.ForEachSegment(begin, end, [&](int64_t out, const int64_t* in, int64_t len) {
      BinarySegment<F>(px + in[0], sx, py + in[1], sy, pz + out, len);
    });
  });
}

template <typename F, typename = void>
struct HasValidate : std::false_type {};
template <typename F>
struct HasValidate<
    F, std::void_t<decltype(F::Validate(std::declval<Tensor>(), std::declval<Tensor>()))>>
    : std::true_type {};

// A broadcasting binary op: inputs x, y of type T, output of type Out.
template <typename T, typename F, typename Out = T, int64_t kCost = kCheapElementCost>
class BinaryOp : public OpKernel {
 public:
  explicit BinaryOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    // Same shapes, or one operand a single element of no higher rank: the
    // output has the other operand's shape and is one segment, so no plan.
    const TensorShape* shape = nullptr;
    if (x.shape() == y.shape() || (y.NumElements() == 1 && y.dims() <= x.dims())) {
      shape = &x.shape();
    } else if (x.NumElements() == 1 && x.dims() <= y.dims()) {
      shape = &y.shape();
    }
    if (shape == nullptr) {
      ComputeWithPlan(ctx, x, y);
      return;
    }
    if constexpr (HasValidate<F>::value) {
      OP_REQUIRES_OK(ctx, F::Validate(x, y));
    }
    const int64_t n = shape->num_elements();
    const int64_t sx = x.NumElements() == 1 ? 0 : 1;
    const int64_t sy = y.NumElements() == 1 ? 0 : 1;
    Tensor* z = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, *shape, &z));
    const T* px = x.base<T>();
    const T* py = y.base<T>();
    Out* pz = z->base<Out>();
    if (n * kCost < kMinParallelCost) {
      BinarySegment<F>(px, sx, py, sy, pz, n);
      return;
    }
    ShardElementwise(ctx, n, kCost, [&](int64_t begin, int64_t end) {
      BinarySegment<F>(px + begin * sx, sx, py + begin * sy, sy, pz + begin, end - begin);
    });
  }

 private:
  static void ComputeWithPlan(OpKernelContext* ctx, const Tensor& x, const Tensor& y) {
    BroadcastPlan plan;
    OP_REQUIRES_OK(ctx, BroadcastPlan::Make({x.shape(), y.shape()}, &plan));
    if constexpr (HasValidate<F>::value) {
      OP_REQUIRES_OK(ctx, F::Validate(x, y));
    }
    Tensor* z = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, plan.output_shape(), &z));
    if (plan.num_elements() == 0) return;
    ComputeBroadcastBinary<F, T, Out>(ctx, plan, x, y, z, kCost);
  }
};

// z = f(y, dy) for the gradient helpers (SigmoidGrad, ...): y and dy must have
// the same shape; no broadcasting.
template <typename T, typename F>
class UnaryGradOp : public OpKernel {
 public:
  explicit UnaryGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& y = ctx->input(0);
    const Tensor& dy = ctx->input(1);
    OP_REQUIRES(ctx, y.shape() == dy.shape(),
                errors::InvalidArgument("y and dy must have the same shape: ",
                                        y.shape().DebugString(), " vs ", dy.shape().DebugString()));
    Tensor* z = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({1, 0}, 0, y.shape(), &z));
    const T* py = y.base<T>();
    const T* pdy = dy.base<T>();
    T* pz = z->base<T>();
    ShardElementwise(ctx, y.NumElements(), kCheapElementCost, [&](int64_t begin, int64_t end) {
      BinarySegment<F>(py + begin, 1, pdy + begin, 1, pz + begin, end - begin);
    });
  }
};

// A unary op whose functor maps an Eigen array expression of
// ComputeType<T> to an expression of the same size:
//   struct Exp { template <typename A> auto operator()(const A& x) const {
//     return x.exp(); } };
// Eigen vectorizes the transcendental functions; bfloat16 goes through float
// in small chunks.
template <typename T, typename F, int64_t kCost = kCheapElementCost>
class UnaryOp : public OpKernel {
 public:
  explicit UnaryOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const T* px = x.base<T>();
    T* py = y->base<T>();
    ShardElementwise(ctx, x.NumElements(), kCost, [&](int64_t begin, int64_t end) {
      Apply(px + begin, py + begin, end - begin);
    });
  }

 private:
  using C = ComputeType<T>;
  using Array = Eigen::Array<C, Eigen::Dynamic, 1>;

  static void Apply(const T* in, T* out, int64_t n) {
    const F f;
    if constexpr (std::is_same_v<T, C>) {
      Eigen::Map<Array>(out, n) = f(Eigen::Map<const Array>(in, n));
    } else {
      constexpr int64_t kChunk = 256;
      C buf[kChunk];
      for (int64_t start = 0; start < n; start += kChunk) {
        const int64_t len = std::min(kChunk, n - start);
        for (int64_t i = 0; i < len; ++i) buf[i] = static_cast<C>(in[start + i]);
        Eigen::Map<Array> a(buf, len);
        a = f(a);
        for (int64_t i = 0; i < len; ++i) out[start + i] = static_cast<T>(buf[i]);
      }
    }
  }
};

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_CWISE_OPS_H_
