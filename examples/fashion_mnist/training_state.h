// What a Fashion-MNIST training job checkpoints and how it starts: the
// model's variables, the optimizer's, the global step and the count of
// finished epochs, with one op initializing all of them and a Saver over
// all of them. Both trainers (in-process and on a cluster) build it the
// same way and start from it the same way: restore the latest checkpoint,
// or initialize when there is none. Graph builders; use from one thread.
#ifndef DISTFLOW_EXAMPLES_FASHION_MNIST_TRAINING_STATE_H_
#define DISTFLOW_EXAMPLES_FASHION_MNIST_TRAINING_STATE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/cc/client_session.h"
#include "distflow/cc/scope.h"
#include "distflow/training/optimizer.h"
#include "distflow/training/saver.h"
#include "distflow/training/variable.h"

namespace distflow {
namespace fashion_mnist {

class TrainingState {
 public:
  // Creates the counters ("global_step", "epoch") in `scope`; call before
  // the optimizer's update, which increments the global step.
  explicit TrainingState(const Scope& scope);

  Variable& global_step() { return global_step_; }
  const Variable& global_step() const { return global_step_; }

  // Adds the initializer, the reads, the epoch count's assignment and the Saver over
  // `model_variables`, the optimizer's variables and the counters, in
  // `root` (whose error it returns).
  absl::Status Finish(const Scope& root, const std::vector<Variable>& model_variables,
                      const Optimizer& optimizer);

  struct Start {
    std::string restored_from;  // checkpoint prefix; empty when initialized
    int64_t epoch = 0;          // epochs already done
    int64_t step = 0;           // the global step
  };
  // Restores the latest checkpoint of `checkpoint_dir` or, when there is
  // none (or no directory), initializes every variable; then reads the
  // counters. A damaged checkpoint index is its error, not a fresh start.
  absl::StatusOr<Start> RestoreOrInitialize(const ClientSession& session,
                                            const std::string& checkpoint_dir) const;

  // Sets the count of finished epochs: idempotent, so a call that runs again
  // after a ps restore leaves the same count.
  absl::Status SetEpochsDone(const ClientSession& session, int64_t epochs) const;
  absl::StatusOr<int64_t> ReadStep(const ClientSession& session) const;
  // Writes a checkpoint at `step` into `dir`.
  // The prefix of the checkpoint written.
  absl::StatusOr<std::string> Save(const ClientSession& session, const std::string& dir,
                                   int64_t step) const;
  // The Saver over every variable, for a save in phases (saver.h).
  Saver* saver() const { return saver_.get(); }

 private:
  Variable global_step_, epoch_;
  Operation init_, set_epochs_;
  Output epochs_done_;  // int64 placeholder: what set_epochs_ assigns
  Output read_step_, read_epoch_;
  std::unique_ptr<Saver> saver_;
};

}  // namespace fashion_mnist
}  // namespace distflow

#endif  // DISTFLOW_EXAMPLES_FASHION_MNIST_TRAINING_STATE_H_
