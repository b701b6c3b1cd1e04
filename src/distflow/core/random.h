// Counter-based random numbers (Philox4x32-10). A generator is fully
// determined by its 64-bit key and 64-bit stream, so random ops give the same
// values for the same seed/seed2 on every run and every machine. A generator
// is not thread-safe; make one per thread or per op.
#ifndef DISTFLOW_CORE_RANDOM_H_
#define DISTFLOW_CORE_RANDOM_H_

#include <array>
#include <cstdint>

namespace distflow {
namespace random {

class PhiloxRandom {
 public:
  using Block = std::array<uint32_t, 4>;
  PhiloxRandom(uint64_t key, uint64_t stream);
  // The next 4 random 32-bit values.
  Block Next();

 private:
  std::array<uint32_t, 4> counter_;
  std::array<uint32_t, 2> key_;
};

// A uniform float in [0, 1) built from the top 23 bits of `x`.
float Uint32ToFloat(uint32_t x);
// A uniform double in [0, 1) built from two 32-bit values.
double Uint64ToDouble(uint32_t hi, uint32_t lo);

// Draws single values from a Philox stream, buffering the 4-value blocks.
class SimplePhilox {
 public:
  SimplePhilox(uint64_t key, uint64_t stream) : gen_(key, stream) {}
  uint32_t Rand32();
  uint64_t Rand64();
  float RandFloat();         // [0, 1)
  double RandDouble();       // [0, 1)
  double Normal();           // standard normal
  double TruncatedNormal();  // standard normal restricted to [-2, 2]

 private:
  PhiloxRandom gen_;
  PhiloxRandom::Block block_{};
  int used_ = 4;
  bool has_spare_normal_ = false;
  double spare_normal_ = 0;
};

// A 64-bit value from the OS entropy source, for ops with seed == seed2 == 0.
uint64_t New64();

// TensorFlow's rule: (0, 0) means "pick fresh random seeds"; a nonzero op
// seed with a zero graph seed uses a fixed default graph seed.
void ResolveSeeds(int64_t seed, int64_t seed2, uint64_t* key, uint64_t* stream);

}  // namespace random
}  // namespace distflow

#endif  // DISTFLOW_CORE_RANDOM_H_
