#include "distflow/coordinator/remote_value.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {

namespace {

bool IsSettled(RemoteValue::State s) {
  return s != RemoteValue::State::kPending && s != RemoteValue::State::kAborted;
}

}  // namespace

RemoteValue::RemoteValue() : shared_(std::make_shared<Shared>()) {}

RemoteValue::State RemoteValue::state() const {
  absl::MutexLock l(&shared_->mu);
  return shared_->state;
}

absl::Status RemoteValue::status() const {
  absl::MutexLock l(&shared_->mu);
  return shared_->error;
}

bool RemoteValue::WaitReady(absl::Duration timeout) const {
  absl::MutexLock l(&shared_->mu);
  Shared* s = shared_.get();
  auto settled = [s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu) { return IsSettled(s->state); };
  return s->mu.AwaitWithTimeout(absl::Condition(&settled), timeout);
}

absl::StatusOr<std::vector<Tensor>> RemoteValue::Fetch(absl::Duration timeout) const {
  if (!WaitReady(timeout)) {
    return errors::DeadlineExceeded("the scheduled function's value was not ready within ",
                                    absl::FormatDuration(timeout));
  }
  absl::MutexLock l(&shared_->mu);
  if (shared_->state != State::kReady) return shared_->error;
  return shared_->values;
}

void RemoteValue::SetReady(std::vector<Tensor> values, int64_t ps_generation) {
  absl::MutexLock l(&shared_->mu);
  shared_->state = State::kReady;
  shared_->values = std::move(values);
  shared_->error = absl::OkStatus();
  shared_->ps_generation = ps_generation;
}

int64_t RemoteValue::ps_generation() const {
  absl::MutexLock l(&shared_->mu);
  return shared_->ps_generation;
}

void RemoteValue::SetError(absl::Status error) {
  absl::MutexLock l(&shared_->mu);
  shared_->state = State::kError;
  shared_->values.clear();
  shared_->error = error.ok() ? errors::Internal("a scheduled function failed with an OK status")
                              : std::move(error);
}

void RemoteValue::SetCancelled() {
  absl::MutexLock l(&shared_->mu);
  if (shared_->state != State::kPending) return;
  shared_->state = State::kCancelled;
  shared_->error = errors::Cancelled(
      "the scheduled function was cancelled because an earlier one failed; schedule it again");
}

void RemoteValue::SetAborted() {
  absl::MutexLock l(&shared_->mu);
  if (shared_->state != State::kReady) return;
  shared_->state = State::kAborted;
  shared_->values.clear();
  shared_->error =
      errors::Aborted("the value's worker was lost; it is rebuilt when the worker returns");
}

const char* RemoteValue::StateName(State s) {
  switch (s) {
    case State::kPending:
      return "pending";
    case State::kReady:
      return "ready";
    case State::kError:
      return "error";
    case State::kCancelled:
      return "cancelled";
    case State::kAborted:
      return "aborted";
  }
  return "unknown";
}

absl::StatusOr<std::vector<std::vector<Tensor>>> FetchAll(const std::vector<RemoteValue>& values,
                                                          absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<std::vector<Tensor>> out;
  out.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StatusOr<std::vector<Tensor>> t =
        values[i].Fetch(std::max(deadline - absl::Now(), absl::ZeroDuration()));
    if (!t.ok()) return errors::Annotate(t.status(), absl::StrCat("value ", i, " of ", values.size(), ": "));
    out.push_back(*std::move(t));
  }
  return out;
}

}  // namespace distflow
