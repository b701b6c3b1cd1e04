// Overflow-checked integer arithmetic for sizes that come from input (shapes,
// byte counts, file offsets). Each returns false, leaving *out unspecified,
// when the exact result does not fit; callers turn that into a Status.
#ifndef DISTFLOW_CORE_CHECKED_MATH_H_
#define DISTFLOW_CORE_CHECKED_MATH_H_

#include <cstdint>

namespace distflow {

// *out = a * b; false on overflow.
template <typename T>
bool MultiplyWithoutOverflow(T a, T b, T* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// *out = a + b; false on overflow.
template <typename T>
bool AddWithoutOverflow(T a, T b, T* out) {
  return !__builtin_add_overflow(a, b, out);
}

template <typename Container>
bool CheckedElementCountHasNoNegative(const Container& sizes) {
  for (int64_t d : sizes) {
    if (d < 0) return false;
  }
  return true;
}

// The product of non-negative `sizes` as int64 (0 when any size is 0,
// however large the others), or -1 when one is negative or the product
// overflows int64.
template <typename Container>
int64_t CheckedElementCount(const Container& sizes) {
  bool overflow = false;
  int64_t n = 1;
  for (int64_t d : sizes) {
    if (d < 0) return -1;
    if (d == 0) return CheckedElementCountHasNoNegative(sizes) ? 0 : -1;
    if (!overflow && !MultiplyWithoutOverflow<int64_t>(n, d, &n)) overflow = true;
  }
  return overflow ? -1 : n;
}

}  // namespace distflow

#endif  // DISTFLOW_CORE_CHECKED_MATH_H_
