#include "distflow/distributed_runtime/worker_interface.h"

#include <utility>

#include "distflow/core/status.h"

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

void WorkerInterface::PushTensorAsync(const PushTensorRequest* /*req*/,
                                      PushTensorResponse* /*resp*/, CallOptions* /*opts*/,
                                      StatusCallback done) {
  done(errors::Unimplemented("PushTensor is not supported by the transport to ", task()));
}

}  // namespace distflow
