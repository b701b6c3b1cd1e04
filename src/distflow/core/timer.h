// Timer: runs callbacks at deadlines, on one background thread per Timer.
// For deadlines on work that has no thread of its own to wait with (an
// in-process call, a step waiting on a peer). Callbacks run one at a time
// on the timer's thread and should be short (cancel something, schedule
// something). Thread-safe; the destructor drops callbacks not yet due.
#ifndef DISTFLOW_CORE_TIMER_H_
#define DISTFLOW_CORE_TIMER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace distflow {

class Timer {
 public:
  using Id = uint64_t;

  Timer();
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // The process-wide timer (never destroyed).
  static Timer* Default();

  // Runs `fn` once `delay` has passed. Returns an id for Cancel.
  Id Schedule(absl::Duration delay, std::function<void()> fn);
  // Drops the callback of `id`. True when it had not started (so it never
  // will); false when it already ran, is running, or was cancelled.
  bool Cancel(Id id);

 private:
  void Loop();

  absl::Mutex mu_;
  // (deadline, id) -> callback; the earliest first.
  std::map<std::pair<absl::Time, Id>, std::function<void()>> pending_ ABSL_GUARDED_BY(mu_);
  std::map<Id, absl::Time> deadlines_ ABSL_GUARDED_BY(mu_);
  Id next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // The deadline the loop waits for; InfiniteFuture while nothing is
  // pending, InfinitePast while it is not waiting. Schedule signals `wake_`
  // only for an earlier deadline.
  absl::Time sleeping_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::CondVar wake_;
  std::thread thread_;
};

}  // namespace distflow

#endif  // DISTFLOW_CORE_TIMER_H_
