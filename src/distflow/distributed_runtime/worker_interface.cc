#include "distflow/distributed_runtime/worker_interface.h"

#include <utility>

namespace distflow {

void CallOptions::StartCancel() {
  std::function<void()> cancel;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_) return;
    cancelled_ = true;
    cancel = std::move(cancel_);
    cancel_ = nullptr;
  }
  if (cancel) cancel();
}

bool CallOptions::SetCancelCallback(std::function<void()> cancel) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return false;
  cancel_ = std::move(cancel);
  return true;
}

void CallOptions::ClearCancelCallback() {
  absl::MutexLock lock(&mu_);
  cancel_ = nullptr;
}

}  // namespace distflow
