// SeedGenerator: the seeds of successive iterations over a shuffled
// dataset. Each new iterator asks for seeds; with reshuffling on, every
// call returns the next pair of a Philox stream keyed by the dataset's
// (seed, seed2), so epochs differ from each other yet the whole sequence of
// orders is determined by the seeds; with reshuffling off every call
// returns the same pair, so every epoch has the same order. seed == seed2
// == 0 draws fresh random seeds once, when the generator is made. It lives
// in a ResourceMgr (ShuffleDatasetV3's seed_generator input) or is owned by
// a ShuffleDataset kernel, so the sequence continues across re-created
// datasets and re-initialised iterators. Thread-safe.
#ifndef DISTFLOW_DATA_SEED_GENERATOR_H_
#define DISTFLOW_DATA_SEED_GENERATOR_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "distflow/core/random.h"
#include "distflow/framework/resource_mgr.h"

namespace distflow {

class SeedGenerator : public ResourceBase {
 public:
  SeedGenerator(int64_t seed, int64_t seed2, bool reshuffle);

  // The (key, stream) for the next iterator's random numbers.
  std::pair<uint64_t, uint64_t> NextIterationSeeds();

  int64_t seed() const { return seed_; }
  int64_t seed2() const { return seed2_; }
  bool reshuffle() const { return reshuffle_; }
  std::string DebugString() const override;

 private:
  const int64_t seed_, seed2_;
  const bool reshuffle_;
  uint64_t key_ = 0, stream_ = 0;  // resolved seeds
  absl::Mutex mu_;
  random::SimplePhilox gen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DATA_SEED_GENERATOR_H_
