// How the coordinator reads a closure's error (TensorFlow's coordinator's
// failure rules):
// whose fault it is decides whether the closure runs again.
//
//   kNone        the closure succeeded
//   kWorker      the worker that ran it failed, froze or restarted
//                (Unavailable, Aborted, DeadlineExceeded, or a Cancelled
//                step it did not ask for): put the closure back, recover
//                the worker
//   kPs          the same codes naming a parameter-server task: transient
//                up to a threshold of reports per ps task, then fatal
//   kFunction    anything else is the function's own error: fatal, raised
//                once by Schedule/Join/Done
//
// Pure functions; thread-safe.
#ifndef DISTFLOW_COORDINATOR_FAILURE_H_
#define DISTFLOW_COORDINATOR_FAILURE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace distflow {

enum class FailureKind { kNone, kWorker, kPs, kFunction };

struct Failure {
  FailureKind kind = FailureKind::kNone;
  // For kPs: the task index named in the error ("/job:ps/replica:0/task:N").
  int ps_task = -1;
};

// True iff `status` is one of the codes a failed, frozen or restarted task
// gives (Unavailable, Aborted, DeadlineExceeded, Cancelled).
bool IsRetryableFailure(const absl::Status& status);

// The ps task that answered without its state — it restarted and its
// variables are gone: a FailedPrecondition or NotFound naming a task of
// `ps_job` about an uninitialized or missing variable or resource. -1 for
// any other status. (Without parameter-server recovery such an error is the
// function's own, as ClassifyFailure says.)
int LostPsStateTask(const absl::Status& status, absl::string_view ps_job);

// Why a task that was called did not answer, in a few words a user can act
// on, read from the call's error: "connection refused (nothing listens
// there: a wrong port, or the task has not started)", "no route to the
// host", "no answer (a wrong host, a firewall dropping packets, or a TLS
// mismatch)", "TLS handshake failed", or the error itself.
std::string UnreachableReason(const absl::Status& status);

// `ps_job` is the parameter servers' job name ("ps").
Failure ClassifyFailure(const absl::Status& status, absl::string_view ps_job);

// The number of transient parameter-server failures ignored per ps task:
// TF_COORDINATOR_IGNORE_TRANSIENT_PS_FAILURES when it holds a non-negative
// integer, else 3.
int TransientPsFailureThreshold();

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_FAILURE_H_
