#include "distflow/coordinator/ps_recovery.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/coordinator/failure.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {

PsRecovery::PsRecovery(Probe probe, Options options)
    : probe_(std::move(probe)), options_(options) {}

void PsRecovery::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
}

absl::StatusOr<PsProbe> PsRecovery::Recover(int task, const std::string& name, int64_t seen,
                                            const absl::Status& why) {
  absl::MutexLock l(&mu_);
  if (generation() != seen) return PsProbe::kRecovered;
  const absl::Time deadline = absl::Now() + options_.timeout;
  absl::Duration backoff = options_.backoff_min;
  absl::Status last = why;
  bool answered_at_once = true;
  while (!stop_.HasBeenNotified()) {
    absl::StatusOr<PsProbe> probed = probe_(task, seen + 1);
    if (probed.ok()) {
      if (!answered_at_once || *probed == PsProbe::kRestored) {
        failures_.fetch_add(1, std::memory_order_relaxed);
        internal::LogLine('W',
                          absl::StrCat("coordinator: parameter server ", name,
                                       *probed == PsProbe::kRestored
                                           ? " is back and was restored from the last "
                                             "checkpoint; training resumes"
                                           : " answers again with its state; training resumes"));
      }
      if (*probed == PsProbe::kRestored) restores_.fetch_add(1, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_acq_rel);
      return *probed;
    }
    if (!IsRetryableFailure(probed.status())) return probed.status();
    if (answered_at_once) {
      internal::LogLine(
          'W', absl::StrCat("coordinator: parameter server ", name, " failed: ", why.ToString(),
                            "; dispatch stops while it is awaited for up to ",
                            absl::FormatDuration(options_.timeout)));
    }
    answered_at_once = false;
    last = probed.status();
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return errors::Unavailable(
          "parameter server ", name, " did not come back within the ps recovery timeout of ",
          absl::FormatDuration(options_.timeout), "; last error: ", last.ToString());
    }
    if (stop_.WaitForNotificationWithTimeout(std::min(backoff, left))) break;
    backoff = std::min(backoff * 2, options_.backoff_max);
  }
  return errors::Cancelled("the coordinator stopped while parameter server ", name, " was awaited");
}

}  // namespace distflow
