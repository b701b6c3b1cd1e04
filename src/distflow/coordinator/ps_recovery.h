// PsRecovery: the coordinator's bounded wait for a parameter server that
// failed or was cut off, and its restoration.
//
// Whoever sees a ps task fail (a worker thread whose closure failed naming
// it, or the chief's own call) calls Recover with the generation it read
// before its call. The first such caller does the work while the others
// wait on it: it calls the owner's `probe` with the task, with backoff,
// until the probe answers or the recovery timeout passes. The probe decides
// what the answer means — the ps kept its state (a healed partition, a
// transient error: nothing to do) or came back empty and was restored from
// the last checkpoint — and says which. Every later caller whose call began
// before that recovery ended returns at once: its failure is explained.
//
// Recoveries are serialized, so no two probes run at once. Past the timeout
// Recover returns Unavailable naming the task and its last error. Stop ends
// a wait in progress (Cancelled). All methods are thread-safe.
#ifndef DISTFLOW_COORDINATOR_PS_RECOVERY_H_
#define DISTFLOW_COORDINATOR_PS_RECOVERY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace distflow {

// What a probe found: the ps task answered with its state intact, or it was
// restored (its state had been lost). Recover also answers kRecovered: a
// recovery that began after the caller's call already ended.
enum class PsProbe { kIntact, kRestored, kRecovered };

class PsRecovery {
 public:
  // The owner's probe of ps task `task`: kIntact or kRestored once the
  // task answers; a retryable error (Unavailable, DeadlineExceeded, Aborted,
  // Cancelled) while it does not; any other error ends the recovery with it.
  // `generation` is what generation() becomes when this probe answers: a
  // closure run that began at an earlier one ran before a restore.
  using Probe = std::function<absl::StatusOr<PsProbe>(int task, int64_t generation)>;

  struct Options {
    absl::Duration timeout = absl::Minutes(1);
    absl::Duration backoff_min = absl::Milliseconds(100);
    absl::Duration backoff_max = absl::Seconds(1);
  };

  // REQUIRES: probe is set; timeout > 0; 0 < backoff_min <= backoff_max.
  PsRecovery(Probe probe, Options options);
  PsRecovery(const PsRecovery&) = delete;
  PsRecovery& operator=(const PsRecovery&) = delete;

  // Advances each time a recovery ends with the ps answering.
  int64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Recovers ps task `task` (`name`, e.g. "/job:ps/replica:0/task:0 at
  // h:p", for messages) after a failure `why` seen by a call that began at
  // generation `seen`. What the probe found, kRecovered at once when a
  // recovery ended since `seen`; Unavailable past the timeout; the probe's own
  // non-retryable error; Cancelled after Stop.
  absl::StatusOr<PsProbe> Recover(int task, const std::string& name, int64_t seen,
                                  const absl::Status& why);

  // Ends a wait in progress and every later one (Cancelled).
  void Stop();

  // Recoveries in which the ps did not answer at first or had lost its
  // state, and those that restored it.
  int64_t failures() const { return failures_.load(std::memory_order_relaxed); }
  int64_t restores() const { return restores_.load(std::memory_order_relaxed); }

 private:
  const Probe probe_;
  const Options options_;
  absl::Mutex mu_;  // held for a whole recovery
  std::atomic<int64_t> generation_{0};
  std::atomic<int64_t> failures_{0}, restores_{0};
  absl::Notification stop_;
};

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_PS_RECOVERY_H_
