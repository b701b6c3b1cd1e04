#include "distflow/data/seed_generator.h"

#include "absl/strings/str_cat.h"

namespace distflow {

SeedGenerator::SeedGenerator(int64_t seed, int64_t seed2, bool reshuffle)
    : seed_(seed), seed2_(seed2), reshuffle_(reshuffle), gen_(0, 0) {
  // Resolved once: (0, 0) draws fresh seeds, which then stay fixed.
  random::ResolveSeeds(seed, seed2, &key_, &stream_);
  gen_ = random::SimplePhilox(key_, stream_);
}

std::pair<uint64_t, uint64_t> SeedGenerator::NextIterationSeeds() {
  if (!reshuffle_) return {key_, stream_};
  absl::MutexLock lock(&mu_);
  const uint64_t key = gen_.Rand64();
  return {key, gen_.Rand64()};
}

std::string SeedGenerator::DebugString() const {
  return absl::StrCat("SeedGenerator(seed=", seed_, ", seed2=", seed2_, ", reshuffle=", reshuffle_,
                      ")");
}

}  // namespace distflow
