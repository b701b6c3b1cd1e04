// Kernels for the broadcasting arithmetic ops: AddV2, Add, Sub, Mul, RealDiv,
// Div, FloorDiv, FloorMod, Pow, Maximum, Minimum, SquaredDifference.
// Integer arithmetic wraps around instead of overflowing; integer division
// by zero and integer powers with negative exponents are InvalidArgument.
#include <cmath>
#include <string>
#include <type_traits>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/cwise_ops.h"

namespace distflow {
namespace {

template <typename C>
constexpr bool kIsSignedInt = std::is_integral_v<C>&& std::is_signed_v<C>;

// Two's-complement wrapping arithmetic for signed integers.
template <typename C>
C WrapAdd(C a, C b) {
  if constexpr (kIsSignedInt<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename C>
C WrapSub(C a, C b) {
  if constexpr (kIsSignedInt<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename C>
C WrapMul(C a, C b) {
  if constexpr (kIsSignedInt<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// InvalidArgument when an integer divisor tensor holds a zero.
absl::Status CheckIntegerDivisor(const Tensor& y) {
  bool has_zero = false;
  if (y.dtype() == DT_INT32) {
    for (int32_t v : y.flat<int32_t>()) has_zero |= v == 0;
  } else if (y.dtype() == DT_INT64) {
    for (int64_t v : y.flat<int64_t>()) has_zero |= v == 0;
  }
  if (has_zero) return errors::InvalidArgument("Integer division by zero");
  return absl::OkStatus();
}

struct AddFn {
  template <typename C>
  C operator()(const C& a, const C& b) const {
    return WrapAdd(a, b);
  }
};
struct SubFn {
  template <typename C>
  C operator()(C a, C b) const {
    return WrapSub(a, b);
  }
};
struct MulFn {
  template <typename C>
  C operator()(C a, C b) const {
    return WrapMul(a, b);
  }
};
struct SquaredDifferenceFn {
  template <typename C>
  C operator()(C a, C b) const {
    const C d = WrapSub(a, b);
    return WrapMul(d, d);
  }
};

// Truncating division for integers (x / -1 wraps for the most negative x).
struct DivFn {
  static absl::Status Validate(const Tensor&, const Tensor& y) { return CheckIntegerDivisor(y); }
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (kIsSignedInt<C>) {
      return b == -1 ? WrapSub(C(0), a) : a / b;
    } else {
      return a / b;
    }
  }
};

// Rounds toward negative infinity, as Python's //.
struct FloorDivFn {
  static absl::Status Validate(const Tensor&, const Tensor& y) { return CheckIntegerDivisor(y); }
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (kIsSignedInt<C>) {
      if (b == -1) return WrapSub(C(0), a);
      const C q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    } else {
      return std::floor(a / b);
    }
  }
};

// The remainder of FloorDiv: zero or the sign of b, as Python's %.
struct FloorModFn {
  static absl::Status Validate(const Tensor&, const Tensor& y) { return CheckIntegerDivisor(y); }
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (kIsSignedInt<C>) {
      if (b == -1) return C(0);
      const C r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
      const C r = std::fmod(a, b);
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
  }
};

struct PowFn {
  static absl::Status Validate(const Tensor&, const Tensor& y) {
    bool negative = false;
    if (y.dtype() == DT_INT32) {
      for (int32_t v : y.flat<int32_t>()) negative |= v < 0;
    } else if (y.dtype() == DT_INT64) {
      for (int64_t v : y.flat<int64_t>()) negative |= v < 0;
    }
    if (negative) {
      return errors::InvalidArgument("Integers to negative integer powers are not allowed");
    }
    return absl::OkStatus();
  }
  template <typename C>
  C operator()(C base, C exp) const {
    if constexpr (std::is_integral_v<C>) {
      C result = 1;
      while (exp > 0) {
        if (exp & 1) result = WrapMul(result, base);
        base = WrapMul(base, base);
        exp >>= 1;
      }
      return result;
    } else {
      return std::pow(base, exp);
    }
  }
};

// NaN in either operand gives NaN, as NumPy's maximum/minimum.
struct MaximumFn {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a)) return a;
    }
    return a > b ? a : b;
  }
};
struct MinimumFn {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a)) return a;
    }
    return a < b ? a : b;
  }
};

#define DF_REGISTER_BINARY(name, F, T, cost)                                    \
  REGISTER_KERNEL_BUILDER(Name(name).Device(kDeviceCpu).TypeConstraint<T>("T"), \
                          BinaryOp<T, F, T, cost>)
#define DF_REGISTER_BINARY_NUMBERS(name, F, cost) \
  DF_REGISTER_BINARY(name, F, float, cost);       \
  DF_REGISTER_BINARY(name, F, double, cost);      \
  DF_REGISTER_BINARY(name, F, int32_t, cost);     \
  DF_REGISTER_BINARY(name, F, int64_t, cost);     \
  DF_REGISTER_BINARY(name, F, bfloat16, cost)

DF_REGISTER_BINARY_NUMBERS("AddV2", AddFn, kCheapElementCost);
DF_REGISTER_BINARY_NUMBERS("Add", AddFn, kCheapElementCost);
DF_REGISTER_BINARY("Add", AddFn, std::string, kTranscendentalElementCost);
DF_REGISTER_BINARY_NUMBERS("Sub", SubFn, kCheapElementCost);
DF_REGISTER_BINARY_NUMBERS("Mul", MulFn, kCheapElementCost);
DF_REGISTER_BINARY_NUMBERS("SquaredDifference", SquaredDifferenceFn, kCheapElementCost);
DF_REGISTER_BINARY_NUMBERS("RealDiv", DivFn, kCheapElementCost);
DF_REGISTER_BINARY_NUMBERS("Div", DivFn, kCheapElementCost);
DF_REGISTER_BINARY_NUMBERS("FloorDiv", FloorDivFn, kTranscendentalElementCost);
DF_REGISTER_BINARY_NUMBERS("FloorMod", FloorModFn, kTranscendentalElementCost);
DF_REGISTER_BINARY_NUMBERS("Pow", PowFn, kTranscendentalElementCost);
DF_REGISTER_BINARY_NUMBERS("Maximum", MaximumFn, kCheapElementCost);
DF_REGISTER_BINARY_NUMBERS("Minimum", MinimumFn, kCheapElementCost);

#undef DF_REGISTER_BINARY_NUMBERS
#undef DF_REGISTER_BINARY

}  // namespace
}  // namespace distflow
