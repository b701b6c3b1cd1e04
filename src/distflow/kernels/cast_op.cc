// Kernel for Cast among float, double, bfloat16, int32, int64, uint8 and
// bool. Conversions are defined for every value: floating to integer
// truncates toward zero and saturates at the target's range, NaN becomes 0;
// anything to bool is "!= 0"; bool to a number is 0 or 1. With Truncate,
// float to bfloat16 drops the low mantissa bits instead of rounding to
// nearest even.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/cwise_ops.h"

namespace distflow {
namespace {

// Calls fn(T{}) for the types Cast supports; false for any other.
template <typename Fn>
bool VisitCastType(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DT_FLOAT:
      fn(float{});
      return true;
    case DT_DOUBLE:
      fn(double{});
      return true;
    case DT_BFLOAT16:
      fn(bfloat16{});
      return true;
    case DT_INT32:
      fn(int32_t{});
      return true;
    case DT_INT64:
      fn(int64_t{});
      return true;
    case DT_UINT8:
      fn(uint8_t{});
      return true;
    case DT_BOOL:
      fn(bool{});
      return true;
    default:
      return false;
  }
}

template <typename Dst, typename Src>
Dst CastValue(Src v) {
  if constexpr (std::is_same_v<Src, bfloat16>) {
    return CastValue<Dst>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<Dst, bfloat16>) {
    return static_cast<bfloat16>(CastValue<float>(v));
  } else if constexpr (std::is_same_v<Dst, bool>) {
    return v != Src(0);
  } else if constexpr (std::is_floating_point_v<Src> && std::is_integral_v<Dst>) {
    if (std::isnan(v)) return 0;
    // Both bounds are exactly representable in Src for the types here
    // (powers of two, and lowest is 0 or -2^k).
    constexpr Src kLow = static_cast<Src>(std::numeric_limits<Dst>::lowest());
    constexpr Src kHighExclusive =
        static_cast<Src>(std::numeric_limits<Dst>::max() / 2 + 1) * Src(2);
    if (v <= kLow) return std::numeric_limits<Dst>::lowest();
    if (v >= kHighExclusive) return std::numeric_limits<Dst>::max();
    return static_cast<Dst>(v);
  } else {
    return static_cast<Dst>(v);
  }
}

// The top 16 bits of a float: bfloat16 by truncation.
bfloat16 TruncateToBfloat16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return Eigen::numext::bit_cast<bfloat16>(static_cast<uint16_t>(bits >> 16));
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("SrcT", &src_));
    ctx->SetStatus(ctx->GetAttr("DstT", &dst_));
    ctx->SetStatus(ctx->GetAttr("Truncate", &truncate_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (src_ == dst_) {
      ctx->set_output(0, x);
      return;
    }
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const int64_t n = x.NumElements();
    bool supported = false;
    VisitCastType(src_, [&](auto src_zero) {
      supported = VisitCastType(dst_, [&](auto dst_zero) {
        using Src = decltype(src_zero);
        using Dst = decltype(dst_zero);
        const Src* in = x.base<Src>();
        Dst* out = y->base<Dst>();
        ShardElementwise(ctx, n, kCheapElementCost, [&](int64_t begin, int64_t end) {
          Convert(in + begin, out + begin, end - begin);
        });
      });
    });
    OP_REQUIRES(ctx, supported,
                errors::Unimplemented("Cast from ", DataTypeString(src_), " to ",
                                      DataTypeString(dst_), " is not supported"));
  }

 private:
  template <typename Src, typename Dst>
  void Convert(const Src* in, Dst* out, int64_t n) const {
    if constexpr (std::is_same_v<Src, float> && std::is_same_v<Dst, bfloat16>) {
      if (truncate_) {
        for (int64_t i = 0; i < n; ++i) out[i] = TruncateToBfloat16(in[i]);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) out[i] = CastValue<Dst>(in[i]);
  }

  DataType src_ = DT_INVALID, dst_ = DT_INVALID;
  bool truncate_ = false;
};

std::vector<DataType> CastTypes() {
  return {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16, DT_INT32, DT_INT64, DT_UINT8, DT_BOOL};
}

REGISTER_KERNEL_BUILDER(Name("Cast")
                            .Device(kDeviceCpu)
                            .TypeConstraint("SrcT", CastTypes())
                            .TypeConstraint("DstT", CastTypes()),
                        CastOp);

}  // namespace
}  // namespace distflow
