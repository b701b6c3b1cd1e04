#include "distflow/core/timer.h"

namespace distflow {

Timer::Timer() : thread_([this] { Loop(); }) {}

Timer::~Timer() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    wake_.Signal();
  }
  thread_.join();
}

Timer* Timer::Default() {
  static Timer* timer = new Timer;
  return timer;
}

Timer::Id Timer::Schedule(absl::Duration delay, std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  const Id id = next_id_++;
  const absl::Time deadline = absl::Now() + delay;
  pending_.emplace(std::make_pair(deadline, id), std::move(fn));
  deadlines_.emplace(id, deadline);
  // Only a deadline earlier than the one the loop sleeps until wakes it.
  if (deadline < sleeping_until_) wake_.Signal();
  return id;
}

bool Timer::Cancel(Id id) {
  absl::MutexLock lock(&mu_);
  auto it = deadlines_.find(id);
  if (it == deadlines_.end()) return false;
  pending_.erase(std::make_pair(it->second, id));
  deadlines_.erase(it);
  return true;
}

void Timer::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    if (pending_.empty()) {
      sleeping_until_ = absl::InfiniteFuture();
      wake_.Wait(&mu_);
      sleeping_until_ = absl::InfinitePast();
      continue;
    }
    auto first = pending_.begin();
    const absl::Time deadline = first->first.first;
    if (absl::Now() < deadline) {
      // A cancelled first deadline does not wake the loop: it wakes at that
      // deadline, finds what is due then, and sleeps again. Steps schedule
      // and cancel deadlines far away, and each wake-up is a context switch.
      sleeping_until_ = deadline;
      wake_.WaitWithDeadline(&mu_, deadline);
      sleeping_until_ = absl::InfinitePast();
      continue;
    }
    std::function<void()> fn = std::move(first->second);
    deadlines_.erase(first->first.second);
    pending_.erase(first);
    mu_.Unlock();
    fn();
    mu_.Lock();
  }
}

}  // namespace distflow
