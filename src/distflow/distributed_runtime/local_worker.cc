#include "distflow/distributed_runtime/local_worker.h"

#include <memory>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "distflow/core/status.h"
#include "distflow/core/timer.h"
#include "distflow/framework/cancellation.h"

namespace distflow {

LocalWorker::LocalWorker(std::string task, Worker* worker)
    : task_(std::move(task)), worker_(worker) {}

void LocalWorker::GetStatusAsync(const GetStatusRequest* req, GetStatusResponse* resp, CallOptions*,
                                 StatusCallback done) {
  worker_->GetStatus(*req, resp);
  done(absl::OkStatus());
}

void LocalWorker::CreateWorkerSessionAsync(const CreateWorkerSessionRequest* req,
                                           CreateWorkerSessionResponse*, CallOptions*,
                                           StatusCallback done) {
  done(worker_->CreateWorkerSession(*req));
}

void LocalWorker::DeleteWorkerSessionAsync(const DeleteWorkerSessionRequest* req,
                                           DeleteWorkerSessionResponse*, CallOptions*,
                                           StatusCallback done) {
  done(worker_->DeleteWorkerSession(*req));
}

void LocalWorker::RegisterGraphAsync(const RegisterGraphRequest* req, RegisterGraphResponse* resp,
                                     CallOptions*, StatusCallback done) {
  done(worker_->RegisterGraph(*req, resp));
}

void LocalWorker::DeregisterGraphAsync(const DeregisterGraphRequest* req, DeregisterGraphResponse*,
                                       CallOptions*, StatusCallback done) {
  done(worker_->DeregisterGraph(*req));
}

void LocalWorker::CleanupGraphAsync(const CleanupGraphRequest* req, CleanupGraphResponse*,
                                    CallOptions*, StatusCallback done) {
  done(worker_->CleanupGraph(*req));
}

void LocalWorker::CleanupAllAsync(const CleanupAllRequest* req, CleanupAllResponse*, CallOptions*,
                                  StatusCallback done) {
  done(worker_->CleanupAll(*req));
}

namespace {

// One RunGraph call in flight: the step's cancellation, fed by the call's
// options and its deadline.
struct RunGraphCall {
  CancellationManager cm;
  absl::Mutex mu;
  bool timed_out ABSL_GUARDED_BY(mu) = false;
};

}  // namespace

void LocalWorker::RunGraphAsync(const RunGraphRequest* req, RunGraphResponse* resp,
                                CallOptions* opts, StatusCallback done) {
  auto call = std::make_shared<RunGraphCall>();
  if (opts != nullptr && !opts->SetCancelCallback([call] { call->cm.StartCancel(); })) {
    done(errors::Cancelled("RunGraph to ", task_, " was cancelled"));
    return;
  }
  Timer::Id timer = 0;
  if (opts != nullptr && opts->timeout_ms() > 0) {
    timer = Timer::Default()->Schedule(absl::Milliseconds(opts->timeout_ms()), [call] {
      {
        absl::MutexLock lock(&call->mu);
        call->timed_out = true;
      }
      call->cm.StartCancel();
    });
  }
  // The worker finishes the step after cancellation too, so `req` and
  // `resp` stay the caller's until `done`.
  worker_->RunGraphAsync(&call->cm, req, resp,
                         [this, call, opts, timer, done = std::move(done)](const absl::Status& s) {
                           if (timer != 0) Timer::Default()->Cancel(timer);
                           if (opts != nullptr) opts->ClearCancelCallback();
                           bool timed_out;
                           {
                             absl::MutexLock lock(&call->mu);
                             timed_out = call->timed_out;
                           }
                           if (!s.ok() && timed_out) {
                             done(errors::DeadlineExceeded("RunGraph to ", task_, " timed out"));
                             return;
                           }
                           done(s);
                         });
}

namespace {

// A RecvTensor in flight. It ends once: with the tensor, or early with
// Cancelled or DeadlineExceeded — after which a late tensor is dropped, so
// the caller's outputs are never written after `done`.
struct RecvCall {
  absl::Mutex mu;
  bool finished ABSL_GUARDED_BY(mu) = false;
  Tensor* tensor = nullptr;
  bool* is_dead = nullptr;
  CallOptions* opts = nullptr;
  Timer::Id timer = 0;
  StatusCallback done;

  // Runs `fill` and `done` if the call has not ended yet.
  void Finish(const absl::Status& s, const std::function<void()>& fill) {
    {
      absl::MutexLock lock(&mu);
      if (finished) return;
      finished = true;
    }
    if (timer != 0) Timer::Default()->Cancel(timer);
    if (opts != nullptr) opts->ClearCancelCallback();
    if (s.ok() && fill) fill();
    StatusCallback cb = std::move(done);
    cb(s);
  }
};

}  // namespace

void LocalWorker::RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key,
                                  Tensor* tensor, bool* is_dead, CallOptions* opts,
                                  StatusCallback done) {
  auto call = std::make_shared<RecvCall>();
  call->tensor = tensor;
  call->is_dead = is_dead;
  call->opts = opts;
  call->done = std::move(done);
  const std::string task = task_;
  if (opts != nullptr && !opts->SetCancelCallback([call, task] {
        call->Finish(errors::Cancelled("RecvTensor to ", task, " was cancelled"), nullptr);
      })) {
    call->opts = nullptr;
    call->Finish(errors::Cancelled("RecvTensor to ", task, " was cancelled"), nullptr);
    return;
  }
  if (opts != nullptr && opts->timeout_ms() > 0) {
    absl::MutexLock lock(&call->mu);
    call->timer = Timer::Default()->Schedule(absl::Milliseconds(opts->timeout_ms()), [call, task] {
      call->Finish(errors::DeadlineExceeded("RecvTensor to ", task, " timed out"), nullptr);
    });
  }
  RecvTensorRequest req;
  req.set_step_id(step_id);
  req.set_rendezvous_key(rendezvous_key);
  worker_->RecvTensorAsync(/*call_cm=*/nullptr, req,
                           [call](const absl::Status& s, const Tensor& value, bool dead) {
                             call->Finish(s, [&] {
                               *call->tensor = value;
                               *call->is_dead = dead;
                             });
                           });
}

}  // namespace distflow
