// Blocking helpers over the asynchronous worker calls (WorkerInterface's
// *Async methods), for the master's control-path RPCs: one call waited for,
// or one call per task issued together and waited for together.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_CALL_UTIL_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_CALL_UTIL_H_

#include <cstddef>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "distflow/distributed_runtime/worker_interface.h"

namespace distflow {

// Runs `start(done)`, which issues one call that reports to `done`, and
// returns that call's status once it has finished.
template <typename Start>
absl::Status CallAndWait(Start&& start) {
  absl::Notification n;
  absl::Status status;
  start([&](const absl::Status& s) {
    status = s;
    n.Notify();
  });
  n.WaitForNotification();
  return status;
}

// Runs `start(i, done)` for every i in [0, n), each issuing one call that
// reports to `done` (or calling it at once with an error), so the calls are
// in flight together; returns their statuses, in order, once all finished.
template <typename Start>
std::vector<absl::Status> CallAllAndWait(size_t n, Start&& start) {
  std::vector<absl::Status> statuses(n);
  absl::BlockingCounter pending(static_cast<int>(n));
  for (size_t i = 0; i < n; ++i) {
    start(i, [&statuses, &pending, i](const absl::Status& s) {
      statuses[i] = s;
      pending.DecrementCount();
    });
  }
  pending.Wait();
  return statuses;
}

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_CALL_UTIL_H_
