#include "distflow/framework/cancellation.h"

#include <utility>

namespace distflow {

CancellationManager::~CancellationManager() {
  // A cancellation racing with destruction must finish before members go.
  bool wait = false;
  {
    absl::MutexLock l(&mu_);
    wait = is_cancelling_;
  }
  if (wait) callbacks_done_.WaitForNotification();
}

void CancellationManager::StartCancel() {
  absl::flat_hash_map<CancellationToken, CancelCallback> callbacks;
  {
    absl::MutexLock l(&mu_);
    if (is_cancelling_) return;
    is_cancelling_ = true;
    cancelling_thread_ = std::this_thread::get_id();
    is_cancelled_.store(true, std::memory_order_release);
    std::swap(callbacks, callbacks_);
  }
  for (auto& [token, callback] : callbacks) callback();
  callbacks_done_.Notify();
}

bool CancellationManager::RegisterCallback(CancellationToken token, CancelCallback callback) {
  absl::MutexLock l(&mu_);
  if (is_cancelling_) return false;
  callbacks_.emplace(token, std::move(callback));
  return true;
}

bool CancellationManager::DeregisterCallback(CancellationToken token) {
  {
    absl::MutexLock l(&mu_);
    if (!is_cancelling_) {
      callbacks_.erase(token);
      return true;
    }
    if (cancelling_thread_ == std::this_thread::get_id()) return false;
  }
  callbacks_done_.WaitForNotification();
  return false;
}

bool CancellationManager::TryDeregisterCallback(CancellationToken token) {
  absl::MutexLock l(&mu_);
  if (is_cancelling_) return false;
  callbacks_.erase(token);
  return true;
}

}  // namespace distflow
