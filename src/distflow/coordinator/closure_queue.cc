#include "distflow/coordinator/closure_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {

ClosureQueue::ClosureQueue(size_t max_size)
    : max_size_(max_size == 0 ? 1 : max_size),
      cancellation_(std::make_shared<CancellationManager>()) {}

absl::Status ClosureQueue::Put(std::shared_ptr<Closure> closure, absl::Duration timeout) {
  std::shared_ptr<CancellationManager> to_cancel;
  absl::Status raised = DoPut(std::move(closure), timeout, &to_cancel);
  if (to_cancel != nullptr) to_cancel->StartCancel();
  return raised;
}

absl::Status ClosureQueue::DoPut(std::shared_ptr<Closure> closure, absl::Duration timeout,
                                 std::shared_ptr<CancellationManager>* to_cancel) {
  absl::MutexLock l(&mu_);
  auto can_put = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopped_ || (waiters_ == 0 && queue_.size() < max_size_);
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&can_put), timeout)) {
    return errors::DeadlineExceeded("the closure queue stayed full (", queue_.size(), " of ",
                                    max_size_, " closures) for ", absl::FormatDuration(timeout),
                                    "; no worker took a closure");
  }
  if (stopped_) return errors::FailedPrecondition("the closure queue is stopped");
  queue_.push_back(std::move(closure));
  if (!error_.ok()) return RaiseErrorLocked(to_cancel);
  return absl::OkStatus();
}

std::shared_ptr<Closure> ClosureQueue::Get(absl::Duration timeout) {
  absl::MutexLock l(&mu_);
  auto has_work = [this]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopped_ || !queue_.empty(); };
  if (!mu_.AwaitWithTimeout(absl::Condition(&has_work), timeout) || stopped_) return nullptr;
  std::shared_ptr<Closure> closure = std::move(queue_.front());
  queue_.pop_front();
  ++in_flight_;
  closure->generation_ = generation_;
  closure->cancellation_ = cancellation_;
  return closure;
}

void ClosureQueue::MarkFinished(const Closure& closure) {
  absl::MutexLock l(&mu_);
  if (closure.generation_ == generation_) --in_flight_;
}

void ClosureQueue::PutBack(std::shared_ptr<Closure> closure) {
  absl::MutexLock l(&mu_);
  if (closure->generation_ != generation_) {
    closure->MarkCancelled();
    return;
  }
  --in_flight_;
  if (!error_.ok()) {
    closure->MarkCancelled();
    return;
  }
  queue_.push_back(std::move(closure));
}

void ClosureQueue::MarkFailed(const Closure& closure, absl::Status error) {
  absl::MutexLock l(&mu_);
  if (closure.generation_ != generation_) return;
  --in_flight_;
  if (error_.ok()) {
    error_ = error.ok() ? errors::Internal("a closure failed with an OK status") : std::move(error);
  }
}

void ClosureQueue::Fail(absl::Status error) {
  absl::MutexLock l(&mu_);
  if (error_.ok()) error_ = std::move(error);
}

absl::Status ClosureQueue::Wait(absl::Duration timeout) {
  std::shared_ptr<CancellationManager> to_cancel;
  absl::Status s = DoWait(timeout, &to_cancel);
  if (to_cancel != nullptr) to_cancel->StartCancel();
  return s;
}

absl::Status ClosureQueue::DoWait(absl::Duration timeout,
                                  std::shared_ptr<CancellationManager>* to_cancel) {
  absl::MutexLock l(&mu_);
  ++waiters_;
  auto finished = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !error_.ok() || (queue_.empty() && in_flight_ == 0);
  };
  const bool done = mu_.AwaitWithTimeout(absl::Condition(&finished), timeout);
  --waiters_;
  if (!error_.ok()) return RaiseErrorLocked(to_cancel);
  if (!done) {
    return errors::DeadlineExceeded("scheduled closures were not done within ",
                                    absl::FormatDuration(timeout), ": ", queue_.size(), " queued, ",
                                    in_flight_, " in flight");
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ClosureQueue::Done() {
  std::shared_ptr<CancellationManager> to_cancel;
  absl::StatusOr<bool> done;
  {
    absl::MutexLock l(&mu_);
    if (!error_.ok()) {
      done = RaiseErrorLocked(&to_cancel);
    } else {
      done = queue_.empty() && in_flight_ == 0;
    }
  }
  if (to_cancel != nullptr) to_cancel->StartCancel();
  return done;
}

void ClosureQueue::Stop() {
  absl::MutexLock l(&mu_);
  stopped_ = true;
}

std::shared_ptr<Closure> ClosureQueue::TakeAfterStop() {
  absl::MutexLock l(&mu_);
  if (!stopped_ || queue_.empty()) return nullptr;
  std::shared_ptr<Closure> closure = std::move(queue_.front());
  queue_.pop_front();
  return closure;
}

size_t ClosureQueue::queued() const {
  absl::MutexLock l(&mu_);
  return queue_.size();
}

int64_t ClosureQueue::in_flight() const {
  absl::MutexLock l(&mu_);
  return in_flight_;
}

absl::Status ClosureQueue::RaiseErrorLocked(std::shared_ptr<CancellationManager>* to_cancel) {
  absl::Status error = std::move(error_);
  error_ = absl::OkStatus();
  internal::LogLine(
      'W', absl::StrCat("coordinator: cancelling ", queue_.size(), " queued and ", in_flight_,
                        " in-flight closures after an error: ", error.ToString()));
  // The in-flight closures hold the old manager; cancelling it stops their
  // calls, and the new generation makes whatever they report later moot.
  *to_cancel = std::move(cancellation_);
  cancellation_ = std::make_shared<CancellationManager>();
  ++generation_;
  in_flight_ = 0;
  std::deque<std::shared_ptr<Closure>> cancelled;
  cancelled.swap(queue_);
  for (const std::shared_ptr<Closure>& c : cancelled) c->MarkCancelled();
  return error;
}

}  // namespace distflow
