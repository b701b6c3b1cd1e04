// RemoteValue: the result of a function scheduled on a ClusterCoordinator,
// which becomes known when some worker has run it (as tf.distribute's RemoteValue).
//
// A value starts kPending and moves once to kReady (tensors), kError (the
// function's own error), or kCancelled (thrown away after another closure's
// error); a per-worker resource value may also go kReady -> kAborted when its
// worker is lost, and back to kReady when it is rebuilt. A closure that fails
// because its worker failed is run again elsewhere and its value stays
// kPending meanwhile, so a caller never sees a worker failure as a result.
//
// A RemoteValue is a cheap handle: copies share one state. All methods are
// thread-safe. Every wait takes a timeout.
#ifndef DISTFLOW_COORDINATOR_REMOTE_VALUE_H_
#define DISTFLOW_COORDINATOR_REMOTE_VALUE_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/framework/tensor.h"

namespace distflow {

class RemoteValue {
 public:
  enum class State { kPending, kReady, kError, kCancelled, kAborted };

  // A new value, kPending.
  RemoteValue();

  State state() const;
  // kPending and kReady: OK. Otherwise the error (Cancelled for kCancelled,
  // Aborted for kAborted).
  absl::Status status() const;

  // Waits until the value is no longer kPending or kAborted, at most
  // `timeout`. Returns the tensors, the value's error, or DeadlineExceeded
  // naming the timeout.
  absl::StatusOr<std::vector<Tensor>> Fetch(absl::Duration timeout) const;

  // Waits at most `timeout`; true iff the value left kPending/kAborted.
  bool WaitReady(absl::Duration timeout) const;

  // Transitions, called by the coordinator. SetReady and SetError take any
  // state to theirs (a re-run closure overwrites an aborted value);
  // SetCancelled only takes kPending (a value already known stays known);
  // SetAborted only takes kReady.
  // `ps_generation`: the coordinator's ps generation (ps_recovery.h) when
  // the run that made the values began; ps_generation() returns it.
  void SetReady(std::vector<Tensor> values, int64_t ps_generation = 0);
  void SetError(absl::Status error);
  void SetCancelled();
  void SetAborted();

  int64_t ps_generation() const;

  static const char* StateName(State s);

 private:
  struct Shared {
    mutable absl::Mutex mu;
    State state ABSL_GUARDED_BY(mu) = State::kPending;
    std::vector<Tensor> values ABSL_GUARDED_BY(mu);
    absl::Status error ABSL_GUARDED_BY(mu);
    int64_t ps_generation ABSL_GUARDED_BY(mu) = 0;
  };
  std::shared_ptr<Shared> shared_;
};

// Fetches a structure of values (as the coordinator's fetch of a nest): the tensors
// of every value in order, all waits together bounded by `timeout`; the
// first value's error (or DeadlineExceeded naming its index) otherwise.
absl::StatusOr<std::vector<std::vector<Tensor>>> FetchAll(const std::vector<RemoteValue>& values,
                                                          absl::Duration timeout);

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_REMOTE_VALUE_H_
