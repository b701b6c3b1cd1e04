#include "fashion_mnist/chief_session.h"

#include <utility>

#include "distflow/coordinator/failure.h"
#include "distflow/core/status.h"

namespace distflow {
namespace fashion_mnist {

ChiefSession::ChiefSession(const Scope& root, SessionOptions options, const TrainingState* state,
                           std::vector<Output> variables, std::string checkpoint_dir)
    : root_(root),
      options_(std::move(options)),
      state_(state),
      variables_(std::move(variables)),
      checkpoint_dir_(std::move(checkpoint_dir)),
      session_(std::make_unique<ClientSession>(root_, options_)) {}

absl::Status ChiefSession::status() const {
  absl::MutexLock l(&mu_);
  return session_->status();
}

absl::Status ChiefSession::Call(const std::function<absl::Status(const ClientSession&)>& fn) {
  absl::MutexLock l(&mu_);
  return fn(*session_);
}

absl::StatusOr<PsProbe> ChiefSession::Probe(int ps_task, int64_t generation) {
  (void)ps_task;  // every ps task is read: a model has variables on each
  auto fresh = std::make_unique<ClientSession>(root_, options_);
  DF_RETURN_IF_ERROR(fresh->status());
  std::vector<Tensor> values;
  const absl::Status read = fresh->Run(variables_, &values);
  if (read.ok()) {
    absl::StatusOr<int64_t> step = state_->ReadStep(*fresh);
    if (!step.ok()) return step.status();
    absl::MutexLock l(&mu_);
    session_ = std::move(fresh);
    return PsProbe::kIntact;
  }
  if (IsRetryableFailure(read)) return read;
  // It answers without its variables: it restarted.
  if (before_restore_) before_restore_();
  DF_ASSIGN_OR_RETURN(TrainingState::Start start,
                      state_->RestoreOrInitialize(*fresh, checkpoint_dir_));
  absl::MutexLock l(&mu_);
  session_ = std::move(fresh);
  restore_ = Restore{start.restored_from, start.step, generation};
  return PsProbe::kRestored;
}

std::optional<ChiefSession::Restore> ChiefSession::TakeRestore() {
  absl::MutexLock l(&mu_);
  std::optional<Restore> r = std::move(restore_);
  restore_.reset();
  return r;
}

}  // namespace fashion_mnist
}  // namespace distflow
