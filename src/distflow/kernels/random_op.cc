// CPU kernels for RandomUniform, RandomStandardNormal and TruncatedNormal,
// for float, double and bfloat16 outputs. Each kernel instance owns a Philox
// stream keyed by its seed/seed2 attrs (core/random.h's ResolveSeeds: fresh
// OS entropy when both are 0) and guarded by a mutex, so successive steps
// continue the stream and a graph run twice with the same nonzero seeds
// produces the same sequence. Values are drawn in element order.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distflow/core/random.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

enum class Distribution { kUniform, kStandardNormal, kTruncatedNormal };

// One draw from `gen` as a T. Uniform values are in [0, 1): bfloat16 ones are
// built from 7 random bits so rounding can never produce 1.
template <typename T, Distribution D>
T Draw(random::SimplePhilox* gen) {
  if constexpr (D == Distribution::kUniform) {
    if constexpr (std::is_same_v<T, double>) {
      return gen->RandDouble();
    } else if constexpr (std::is_same_v<T, float>) {
      return gen->RandFloat();
    } else {
      return static_cast<T>(static_cast<float>(gen->Rand32() >> 25) * (1.0f / 128.0f));
    }
  } else if constexpr (D == Distribution::kStandardNormal) {
    return static_cast<T>(gen->Normal());
  } else {
    return static_cast<T>(gen->TruncatedNormal());
  }
}

// The generator for a kernel's seed/seed2 attrs; records a missing attr on
// `ctx`.
random::SimplePhilox MakeGenerator(OpKernelConstruction* ctx) {
  int64_t seed = 0, seed2 = 0;
  ctx->SetStatus(ctx->GetAttr("seed", &seed));
  ctx->SetStatus(ctx->GetAttr("seed2", &seed2));
  uint64_t key = 0, stream = 0;
  random::ResolveSeeds(seed, seed2, &key, &stream);
  return random::SimplePhilox(key, stream);
}

template <typename T, Distribution D>
class RandomOp : public OpKernel {
 public:
  explicit RandomOp(OpKernelConstruction* ctx) : OpKernel(ctx), gen_(MakeGenerator(ctx)) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    OP_REQUIRES(ctx, shape_t.dims() == 1,
                errors::InvalidArgument("shape must be a 1-D int32 or int64 tensor, got shape ",
                                        shape_t.shape().DebugString()));
    std::vector<int64_t> dims;
    if (shape_t.dtype() == DT_INT32) {
      for (int32_t d : shape_t.flat<int32_t>()) dims.push_back(d);
    } else {
      for (int64_t d : shape_t.flat<int64_t>()) dims.push_back(d);
    }
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::BuildTensorShape(dims, &shape));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    T* y = out->base<T>();
    const int64_t n = out->NumElements();
    absl::MutexLock lock(&mu_);
    for (int64_t i = 0; i < n; ++i) y[i] = Draw<T, D>(&gen_);
  }

 private:
  absl::Mutex mu_;
  random::SimplePhilox gen_ ABSL_GUARDED_BY(mu_);
};

#define DF_REGISTER_RANDOM(T)                                                                    \
  REGISTER_KERNEL_BUILDER(Name("RandomUniform").Device(kDeviceCpu).TypeConstraint<T>("dtype"),   \
                          RandomOp<T, Distribution::kUniform>);                                  \
  REGISTER_KERNEL_BUILDER(                                                                       \
      Name("RandomStandardNormal").Device(kDeviceCpu).TypeConstraint<T>("dtype"),                \
      RandomOp<T, Distribution::kStandardNormal>);                                               \
  REGISTER_KERNEL_BUILDER(Name("TruncatedNormal").Device(kDeviceCpu).TypeConstraint<T>("dtype"), \
                          RandomOp<T, Distribution::kTruncatedNormal>)

DF_REGISTER_RANDOM(float);
DF_REGISTER_RANDOM(double);
DF_REGISTER_RANDOM(bfloat16);

#undef DF_REGISTER_RANDOM

}  // namespace
}  // namespace distflow
