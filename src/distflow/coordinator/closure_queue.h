// ClosureQueue: the coordinator's bounded FIFO of scheduled closures, its
// count of closures in flight, and the first error they raised (as
// TensorFlow's _CoordinatedClosureQueue).
//
// Error rule (TensorFlow's coordinator's): the first error a closure reports (MarkFailed) is
// raised by the next Put, Wait or Done, exactly once. Raising it cancels
// every queued closure (their values become kCancelled), cancels the
// in-flight ones through their cancellation manager, and clears the error,
// so scheduling can go on. Closures in flight when the error was raised
// belong to the old generation: whatever they report later is ignored, and
// one put back is cancelled, not re-queued, so no wait depends on them.
//
// Differences from the seed, both so that no wait is unbounded: every
// blocking call takes a timeout, and PutBack never blocks — a closure put
// back takes the slot it held before Get, so the queue may exceed its
// capacity by at most the number of closures in flight.
//
// All methods are thread-safe.
#ifndef DISTFLOW_COORDINATOR_CLOSURE_QUEUE_H_
#define DISTFLOW_COORDINATOR_CLOSURE_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/coordinator/closure.h"
#include "distflow/framework/cancellation.h"

namespace distflow {

class ClosureQueue {
 public:
  // REQUIRES: max_size > 0.
  explicit ClosureQueue(size_t max_size);
  ClosureQueue(const ClosureQueue&) = delete;
  ClosureQueue& operator=(const ClosureQueue&) = delete;

  // Appends `closure`, waiting at most `timeout` for a free slot and for a
  // running Wait to return. Then raises a pending error, if any: the error is
  // returned and every queued closure, this one included, is cancelled.
  // DeadlineExceeded when no slot came in time (the closure is not queued);
  // FailedPrecondition after Stop.
  absl::Status Put(std::shared_ptr<Closure> closure, absl::Duration timeout);

  // Takes the oldest closure and counts it in flight; waits at most
  // `timeout`. Null on timeout or after Stop.
  std::shared_ptr<Closure> Get(absl::Duration timeout);

  // The closure in flight finished; its value is set by the caller.
  void MarkFinished(const Closure& closure);

  // The closure in flight could not run to the end on its worker (the
  // worker failed): it goes to the back of the queue to run elsewhere, or is
  // cancelled when an error is pending or its generation is over.
  void PutBack(std::shared_ptr<Closure> closure);

  // The closure in flight failed with `error`, which becomes the pending
  // error unless one is pending already (the first error wins). An error
  // from an old generation is ignored.
  void MarkFailed(const Closure& closure, absl::Status error);

  // An error of the whole job rather than of one closure (every worker
  // lost): becomes the pending error unless one is pending already.
  void Fail(absl::Status error);

  // Waits until no closure is queued or in flight, or an error is pending,
  // at most `timeout`. Raises a pending error as Put does. DeadlineExceeded
  // when the closures were not done in time (nothing is cancelled then).
  absl::Status Wait(absl::Duration timeout);

  // True iff nothing is queued or in flight; raises a pending error first.
  absl::StatusOr<bool> Done();

  // Get returns null from now on, at once; queued closures stay queued.
  void Stop();
  // After Stop: removes and returns the oldest queued closure (not counted
  // in flight), null when none is left, so an owner can cancel them.
  std::shared_ptr<Closure> TakeAfterStop();

  size_t queued() const;
  int64_t in_flight() const;

 private:
  // The bodies of Put and Wait, which take the lock. The caller cancels
  // *to_cancel, when set, after the lock is released: cancellation callbacks
  // may take other locks.
  absl::Status DoPut(std::shared_ptr<Closure> closure, absl::Duration timeout,
                     std::shared_ptr<CancellationManager>* to_cancel);
  absl::Status DoWait(absl::Duration timeout, std::shared_ptr<CancellationManager>* to_cancel);
  // Cancels the queued closures, starts a new generation, hands the old
  // generation's cancellation manager to *to_cancel, and clears and returns
  // the error. REQUIRES: error_ is not OK.
  absl::Status RaiseErrorLocked(std::shared_ptr<CancellationManager>* to_cancel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_size_;
  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<Closure>> queue_ ABSL_GUARDED_BY(mu_);
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  // Number of Wait calls in progress; Put waits while it is not zero, so a
  // Wait is answerable for exactly the closures put before it began.
  int waiters_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<CancellationManager> cancellation_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_CLOSURE_QUEUE_H_
