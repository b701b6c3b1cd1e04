#include "fashion_mnist/training_state.h"

#include "distflow/cc/ops/standard_ops.h"
#include "distflow/core/status.h"

namespace distflow {
namespace fashion_mnist {
namespace {

absl::StatusOr<std::vector<Saver::Variable>> ToSaverVariables(const std::vector<Variable>& vars) {
  std::vector<Saver::Variable> out;
  for (const Variable& v : vars) {
    if (v.handle().node() == nullptr) return errors::Internal("a variable to save is null");
    TensorShape shape;
    if (!v.shape().AsTensorShape(&shape)) {
      return errors::Internal("variable '", v.name(), "' has no fully known shape");
    }
    out.push_back(Saver::Variable{v.name(), v.handle(), v.dtype(), shape});
  }
  return out;
}

}  // namespace

TrainingState::TrainingState(const Scope& scope)
    : global_step_(CreateGlobalStep(scope)), epoch_(scope.WithOpName("epoch"), int64_t{0}) {}

absl::Status TrainingState::Finish(const Scope& root, const std::vector<Variable>& model_variables,
                                   const Optimizer& optimizer) {
  DF_RETURN_IF_ERROR(root.status());
  epochs_done_ = ops::Placeholder(root.WithOpName("epochs_done"), DT_INT64);
  set_epochs_ = epoch_.Assign(root, epochs_done_);
  read_step_ = global_step_.Read(root);
  read_epoch_ = epoch_.Read(root);
  std::vector<Variable> all = model_variables;
  all.insert(all.end(), optimizer.variables().begin(), optimizer.variables().end());
  all.push_back(global_step_);
  all.push_back(epoch_);
  std::vector<Operation> inits = optimizer.initializers();
  for (const Variable& v : all) inits.push_back(v.initializer());
  init_ = ops::NoOp(root.WithOpName("init").WithControlDependencies(inits));
  DF_ASSIGN_OR_RETURN(std::vector<Saver::Variable> saved, ToSaverVariables(all));
  saver_ = std::make_unique<Saver>(root, std::move(saved));
  return root.status();
}

absl::StatusOr<TrainingState::Start> TrainingState::RestoreOrInitialize(
    const ClientSession& session, const std::string& checkpoint_dir) const {
  Start start;
  absl::StatusOr<std::string> latest = checkpoint_dir.empty()
                                           ? absl::NotFoundError("no checkpoint directory")
                                           : Saver::LatestCheckpoint(checkpoint_dir);
  if (latest.ok()) {
    DF_RETURN_IF_ERROR(saver_->Restore(session, *latest));
    start.restored_from = *latest;
  } else if (latest.status().code() == absl::StatusCode::kNotFound) {
    DF_RETURN_IF_ERROR(session.Run({}, {}, {init_}, nullptr));
  } else {
    return latest.status();
  }
  std::vector<Tensor> out;
  DF_RETURN_IF_ERROR(session.Run({read_epoch_, read_step_}, &out));
  start.epoch = out[0].scalar<int64_t>();
  start.step = out[1].scalar<int64_t>();
  return start;
}

absl::Status TrainingState::SetEpochsDone(const ClientSession& session, int64_t epochs) const {
  return session.Run({{epochs_done_, Input::Initializer(epochs)}}, {}, {set_epochs_}, nullptr);
}

absl::StatusOr<int64_t> TrainingState::ReadStep(const ClientSession& session) const {
  std::vector<Tensor> out;
  DF_RETURN_IF_ERROR(session.Run({read_step_}, &out));
  return out[0].scalar<int64_t>();
}

absl::StatusOr<std::string> TrainingState::Save(const ClientSession& session,
                                                const std::string& dir, int64_t step) const {
  return saver_->Save(session, dir, step);
}

}  // namespace fashion_mnist
}  // namespace distflow
