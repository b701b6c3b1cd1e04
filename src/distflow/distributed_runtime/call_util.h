// Helpers over the asynchronous worker calls (WorkerInterface's *Async
// methods), for the master's control-path RPCs: one call waited for, or one
// call per task issued together and then waited for together or followed by
// a continuation.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_CALL_UTIL_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_CALL_UTIL_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
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
// in flight together; then runs `all_done` with their statuses, in order,
// on the thread that reported last (this one when n is 0). No thread waits.
template <typename Start>
void CallAll(size_t n, Start&& start, std::function<void(std::vector<absl::Status>)> all_done) {
  struct Pending {
    std::vector<absl::Status> statuses;
    std::atomic<size_t> left;
    std::function<void(std::vector<absl::Status>)> all_done;
  };
  if (n == 0) {
    all_done({});
    return;
  }
  auto pending = std::make_shared<Pending>();
  pending->statuses.resize(n);
  pending->left.store(n, std::memory_order_relaxed);
  pending->all_done = std::move(all_done);
  for (size_t i = 0; i < n; ++i) {
    start(i, [pending, i](const absl::Status& s) {
      pending->statuses[i] = s;
      if (pending->left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        pending->all_done(std::move(pending->statuses));
      }
    });
  }
}

// CallAll, waiting for the statuses.
template <typename Start>
std::vector<absl::Status> CallAllAndWait(size_t n, Start&& start) {
  absl::Notification done;
  std::vector<absl::Status> statuses;
  CallAll(n, std::forward<Start>(start), [&done, &statuses](std::vector<absl::Status> s) {
    statuses = std::move(s);
    done.Notify();
  });
  done.WaitForNotification();
  return statuses;
}

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_CALL_UTIL_H_
