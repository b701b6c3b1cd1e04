#include "distflow/core/threadpool.h"

#define EIGEN_USE_THREADS
#include <algorithm>
#include <thread>

#include "absl/synchronization/blocking_counter.h"
#include "distflow/core/logging.h"
#include "unsupported/Eigen/CXX11/ThreadPool"

namespace distflow {

struct ThreadPool::Impl {
  explicit Impl(int n) : pool(n) {}
  Eigen::ThreadPool pool;
};

ThreadPool::ThreadPool(std::string name, int num_threads) : name_(std::move(name)) {
  DF_CHECK(num_threads >= 1);
  impl_ = std::make_unique<Impl>(num_threads);
}

ThreadPool::~ThreadPool() = default;

void ThreadPool::Schedule(std::function<void()> fn) { impl_->pool.Schedule(std::move(fn)); }

int ThreadPool::NumThreads() const { return impl_->pool.NumThreads(); }

int ThreadPool::CurrentThreadId() const { return impl_->pool.CurrentThreadId(); }

void ThreadPool::ParallelFor(int64_t total, int64_t cost_per_unit,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (total <= 0) return;
  // About 10us of work per shard is worth a hand-off.
  constexpr int64_t kMinCostPerShard = 10000;
  const int64_t cost = std::max<int64_t>(cost_per_unit, 1);
  const int64_t min_block = std::max<int64_t>(1, kMinCostPerShard / cost);
  const int64_t max_shards = static_cast<int64_t>(NumThreads()) + 1;
  int64_t shards = std::min(max_shards, (total + min_block - 1) / min_block);
  if (shards <= 1 || (CurrentThreadId() >= 0 && NumThreads() == 1)) {
    fn(0, total);
    return;
  }
  const int64_t block = (total + shards - 1) / shards;
  shards = (total + block - 1) / block;
  absl::BlockingCounter counter(static_cast<int>(shards - 1));
  for (int64_t s = 1; s < shards; ++s) {
    const int64_t begin = s * block;
    const int64_t end = std::min(total, begin + block);
    impl_->pool.Schedule([&fn, &counter, begin, end] {
      fn(begin, end);
      counter.DecrementCount();
    });
  }
  fn(0, std::min(total, block));
  counter.Wait();
}

int NumSchedulableCPUs() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace distflow
