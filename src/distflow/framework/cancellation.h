// CancellationManager: how one step tells every kernel and executor working
// on it to stop. Work that can block (a kernel waiting for a tensor, a timer,
// an RPC) registers a callback under a token; StartCancel runs every
// registered callback once and makes later registrations fail, so nothing
// waits forever on a cancelled step. All methods are thread-safe. Callbacks
// run on the thread that calls StartCancel, outside the manager's lock.
#ifndef DISTFLOW_FRAMEWORK_CANCELLATION_H_
#define DISTFLOW_FRAMEWORK_CANCELLATION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace distflow {

using CancellationToken = int64_t;
using CancelCallback = std::function<void()>;

class CancellationManager {
 public:
  CancellationManager() = default;
  // REQUIRES: no callback is still registered by work that outlives this.
  ~CancellationManager();
  CancellationManager(const CancellationManager&) = delete;
  CancellationManager& operator=(const CancellationManager&) = delete;

  // Runs every registered callback (once each) and marks the manager
  // cancelled. Idempotent; returns after the callbacks have run, or at once
  // when another thread is already cancelling.
  void StartCancel();

  // True iff StartCancel has been called.
  bool IsCancelled() const { return is_cancelled_.load(std::memory_order_acquire); }

  // A fresh token for RegisterCallback.
  CancellationToken get_cancellation_token() {
    return next_token_.fetch_add(1, std::memory_order_relaxed);
  }

  // Registers `callback` to run on cancellation. Returns false (and does not
  // keep the callback) iff the manager is already cancelled: the caller must
  // then stop on its own.
  bool RegisterCallback(CancellationToken token, CancelCallback callback);

  // Removes the callback of `token`. Returns true iff it was removed before
  // running. When cancellation is in progress on another thread it waits
  // until every callback has finished, so after it returns the callback is
  // not running and never will; returns false in that case. Called from
  // inside a callback it returns false at once (the callbacks run one after
  // another on that thread).
  bool DeregisterCallback(CancellationToken token);

  // Like DeregisterCallback but never waits: false when cancellation has
  // started (the callback may be running right now).
  bool TryDeregisterCallback(CancellationToken token);

 private:
  absl::Mutex mu_;
  std::atomic<bool> is_cancelled_{false};
  std::atomic<CancellationToken> next_token_{0};
  bool is_cancelling_ ABSL_GUARDED_BY(mu_) = false;
  std::thread::id cancelling_thread_ ABSL_GUARDED_BY(mu_);
  absl::Notification callbacks_done_;
  absl::flat_hash_map<CancellationToken, CancelCallback> callbacks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_CANCELLATION_H_
