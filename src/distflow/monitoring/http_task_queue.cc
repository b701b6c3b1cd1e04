#include "distflow/monitoring/http_task_queue.h"

#include <utility>

namespace distflow {

BoundedHttpTaskQueue::BoundedHttpTaskQueue(size_t threads, size_t max_waiting)
    : max_waiting_(max_waiting) {
  if (threads == 0) threads = 1;
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

BoundedHttpTaskQueue::~BoundedHttpTaskQueue() { shutdown(); }

void BoundedHttpTaskQueue::enqueue(std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  // Each connection a thread serves ends within the server's timeouts, so
  // this wait ends too.
  mu_.Await(absl::Condition(
      +[](BoundedHttpTaskQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) {
        return q->waiting_.size() < q->max_waiting_ || q->shutdown_;
      },
      this));
  waiting_.push_back(std::move(fn));
}

void BoundedHttpTaskQueue::shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) return;
    shutdown_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

size_t BoundedHttpTaskQueue::in_flight() const {
  absl::MutexLock lock(&mu_);
  return waiting_.size() + running_;
}

void BoundedHttpTaskQueue::Work() {
  for (;;) {
    std::function<void()> fn;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](BoundedHttpTaskQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu_) {
            return !q->waiting_.empty() || q->shutdown_;
          },
          this));
      if (waiting_.empty()) return;  // shut down, nothing left
      fn = std::move(waiting_.front());
      waiting_.pop_front();
      ++running_;
    }
    fn();  // serves the connection and closes it
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

}  // namespace distflow
