// A fixed-size pool of worker threads (Eigen's non-blocking, work-stealing
// pool underneath). Used as the inter-op pool by executors and as the intra-op
// pool by kernels that parallelise. All methods are thread-safe; the
// destructor waits for every scheduled closure to finish.
#ifndef DISTFLOW_CORE_THREADPOOL_H_
#define DISTFLOW_CORE_THREADPOOL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace distflow {

class ThreadPool {
 public:
  // REQUIRES: num_threads >= 1.
  ThreadPool(std::string name, int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Runs `fn` on some pool thread, later.
  void Schedule(std::function<void()> fn);

  // Calls fn(begin, end) over disjoint ranges covering [0, total), on pool
  // threads and the calling thread, and returns when all calls are done.
  // `cost_per_unit` (roughly, cycles per element) decides how finely to split;
  // cheap work runs inline in one call.
  void ParallelFor(int64_t total, int64_t cost_per_unit,
                   const std::function<void(int64_t, int64_t)>& fn);

  int NumThreads() const;
  // The index of the calling thread in this pool, or -1 when it is not one of
  // the pool's threads.
  int CurrentThreadId() const;
  const std::string& name() const { return name_; }

 private:
  struct Impl;
  std::string name_;
  std::unique_ptr<Impl> impl_;
};

// The number of hardware threads, at least 1.
int NumSchedulableCPUs();

}  // namespace distflow

#endif  // DISTFLOW_CORE_THREADPOOL_H_
