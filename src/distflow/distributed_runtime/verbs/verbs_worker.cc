#include "distflow/distributed_runtime/verbs/verbs_worker.h"

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/core/timer.h"

namespace distflow {
namespace {

// One receive: which channel receive it is, and whether it ended or was
// cancelled before the channel gave it an id.
struct RecvCall {
  absl::Mutex mu;
  uint64_t id ABSL_GUARDED_BY(mu) = 0;
  bool finished ABSL_GUARDED_BY(mu) = false;
  absl::Status cancelled ABSL_GUARDED_BY(mu);
  Timer::Id timer ABSL_GUARDED_BY(mu) = 0;
};

void CancelCall(const std::shared_ptr<RecvCall>& call, const std::shared_ptr<RdmaChannel>& ch,
                const absl::Status& status) {
  uint64_t id;
  {
    absl::MutexLock lock(&call->mu);
    if (call->finished) return;
    if (call->id == 0) {
      if (call->cancelled.ok()) call->cancelled = status;
      return;
    }
    id = call->id;
  }
  ch->CancelRecv(id, status);
}

}  // namespace

VerbsWorker::VerbsWorker(std::unique_ptr<WorkerInterface> control, RdmaMgr* mgr,
                         RemoteAddressExchange exchange)
    : control_(std::move(control)), mgr_(mgr), exchange_(std::move(exchange)) {}

void VerbsWorker::RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key,
                                  Tensor* tensor, bool* is_dead, CallOptions* opts,
                                  StatusCallback done) {
  if (use_control_.load(std::memory_order_relaxed)) {
    control_->RecvTensorAsync(step_id, rendezvous_key, tensor, is_dead, opts, std::move(done));
    return;
  }
  absl::StatusOr<std::shared_ptr<RdmaChannel>> channel = mgr_->GetChannel(task(), exchange_);
  if (absl::IsFailedPrecondition(channel.status())) {
    use_control_.store(true, std::memory_order_relaxed);
    control_->RecvTensorAsync(step_id, rendezvous_key, tensor, is_dead, opts, std::move(done));
    return;
  }
  if (!channel.ok()) {
    done(channel.status());
    return;
  }
  std::shared_ptr<RdmaChannel> ch = std::move(*channel);
  auto call = std::make_shared<RecvCall>();
  const std::string& peer = task();
  if (opts != nullptr) {
    if (!opts->SetCancelCallback([call, ch, peer] {
          CancelCall(call, ch, errors::Cancelled("RecvTensor from ", peer, " was cancelled"));
        })) {
      done(errors::Cancelled("RecvTensor from ", peer, " was cancelled"));
      return;
    }
    if (opts->timeout_ms() > 0) {
      const int64_t ms = opts->timeout_ms();
      const Timer::Id timer = Timer::Default()->Schedule(absl::Milliseconds(ms), [call, ch, peer,
                                                                                  ms] {
        CancelCall(call, ch,
                   errors::DeadlineExceeded("RecvTensor from ", peer, " took over ", ms, " ms"));
      });
      absl::MutexLock lock(&call->mu);
      call->timer = timer;
    }
  }
  const uint64_t id = ch->RecvTensor(step_id, rendezvous_key,
                                     [call, opts, tensor, is_dead, done = std::move(done)](
                                         const absl::Status& s, const Tensor& t, bool dead) {
                                       Timer::Id timer;
                                       {
                                         absl::MutexLock lock(&call->mu);
                                         call->finished = true;
                                         timer = call->timer;
                                       }
                                       if (timer != 0) Timer::Default()->Cancel(timer);
                                       if (opts != nullptr) opts->ClearCancelCallback();
                                       if (s.ok()) {
                                         *tensor = t;
                                         *is_dead = dead;
                                       }
                                       done(s);
                                     });
  absl::Status cancelled;
  {
    absl::MutexLock lock(&call->mu);
    call->id = id;
    if (call->finished) return;
    cancelled = call->cancelled;
  }
  if (!cancelled.ok()) ch->CancelRecv(id, cancelled);
}

}  // namespace distflow
