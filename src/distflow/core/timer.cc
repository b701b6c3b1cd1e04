#include "distflow/core/timer.h"

namespace distflow {

Timer::Timer() : thread_([this] { Loop(); }) {}

Timer::~Timer() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
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
      mu_.Await(absl::Condition(
          +[](Timer* t) ABSL_NO_THREAD_SAFETY_ANALYSIS { return t->stop_ || !t->pending_.empty(); },
          this));
      continue;
    }
    auto first = pending_.begin();
    const absl::Time deadline = first->first.first;
    if (absl::Now() < deadline) {
      // Wakes early when an earlier deadline arrives or the timer stops.
      std::pair<Timer*, Id> arg(this, first->first.second);
      mu_.AwaitWithDeadline(absl::Condition(
                                +[](std::pair<Timer*, Id>* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                  Timer* t = a->first;
                                  return t->stop_ || t->pending_.empty() ||
                                         t->pending_.begin()->first.second != a->second;
                                },
                                &arg),
                            deadline);
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
