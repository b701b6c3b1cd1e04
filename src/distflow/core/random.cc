#include "distflow/core/random.h"

#include <cmath>
#include <cstring>
#include <random>

namespace distflow {
namespace random {
namespace {

constexpr uint32_t kPhiloxM0 = 0xD2511F53;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85;

inline void MulHiLo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

}  // namespace

PhiloxRandom::PhiloxRandom(uint64_t key, uint64_t stream) {
  key_ = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
  counter_ = {0, 0, static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)};
}

PhiloxRandom::Block PhiloxRandom::Next() {
  Block ctr = counter_;
  std::array<uint32_t, 2> key = key_;
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    MulHiLo(kPhiloxM0, ctr[0], &hi0, &lo0);
    MulHiLo(kPhiloxM1, ctr[2], &hi1, &lo1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
    key[0] += kPhiloxW0;
    key[1] += kPhiloxW1;
  }
  // 128-bit counter increment.
  if (++counter_[0] == 0 && ++counter_[1] == 0 && ++counter_[2] == 0) {
    ++counter_[3];
  }
  return ctr;
}

float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = (x >> 9) | 0x3f800000u;  // [1, 2)
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

double Uint64ToDouble(uint32_t hi, uint32_t lo) {
  const uint64_t m = (static_cast<uint64_t>(hi) << 20) ^ (lo >> 12);
  const uint64_t bits = (m & 0xFFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

uint32_t SimplePhilox::Rand32() {
  if (used_ == 4) {
    block_ = gen_.Next();
    used_ = 0;
  }
  return block_[used_++];
}

uint64_t SimplePhilox::Rand64() {
  const uint64_t hi = Rand32();
  return (hi << 32) | Rand32();
}

float SimplePhilox::RandFloat() { return Uint32ToFloat(Rand32()); }

double SimplePhilox::RandDouble() {
  const uint32_t hi = Rand32();
  return Uint64ToDouble(hi, Rand32());
}

double SimplePhilox::Normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  // Box-Muller; u1 in (0, 1] so the log is finite.
  const double u1 = 1.0 - RandDouble();
  const double u2 = RandDouble();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_normal_ = r * std::sin(theta);
  has_spare_normal_ = true;
  return r * std::cos(theta);
}

double SimplePhilox::TruncatedNormal() {
  for (;;) {
    const double x = Normal();
    if (std::fabs(x) <= 2.0) return x;
  }
}

uint64_t New64() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return rng();
}

void ResolveSeeds(int64_t seed, int64_t seed2, uint64_t* key, uint64_t* stream) {
  constexpr int64_t kDefaultGraphSeed = 87654321;
  if (seed == 0 && seed2 == 0) {
    *key = New64();
    *stream = New64();
    return;
  }
  *key = static_cast<uint64_t>(seed == 0 ? kDefaultGraphSeed : seed);
  *stream = static_cast<uint64_t>(seed2);
}

}  // namespace random
}  // namespace distflow
