// ChiefSession: the chief's own session of a cluster training job — on ps
// task 0's master, with only the ps job, so it works while workers come and
// go — which initializes, restores, saves and reads the counters, and which
// a parameter-server recovery replaces.
//
// Probe is the coordinator's PsRecovery::Probe: it makes a fresh session
// and reads every model variable and the global step through it. When they
// read, the ps tasks kept their state (kIntact); when a ps task does not
// answer, the error is retryable; when it answers without its variables (it
// restarted), the last checkpoint of the directory is restored onto it, or
// the variables are initialized when there is none (kRestored), and
// TakeRestore reports the global step training resumes from; the
// before_restore hook runs first (the trainer finishes its checkpoint write
// there, so the restore reads an index no write changes any more). Either
// way the fresh session replaces the old one, whose master may have died.
//
// Thread-safe: Call and Probe are serialized.
#ifndef DISTFLOW_EXAMPLES_FASHION_MNIST_CHIEF_SESSION_H_
#define DISTFLOW_EXAMPLES_FASHION_MNIST_CHIEF_SESSION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "distflow/cc/client_session.h"
#include "distflow/coordinator/ps_recovery.h"
#include "fashion_mnist/training_state.h"

namespace distflow {
namespace fashion_mnist {

class ChiefSession {
 public:
  // REQUIRES: `root`, `state` and the graph of `variables` outlive this.
  ChiefSession(const Scope& root, SessionOptions options, const TrainingState* state,
               std::vector<Output> variables, std::string checkpoint_dir);
  ChiefSession(const ChiefSession&) = delete;
  ChiefSession& operator=(const ChiefSession&) = delete;

  // Runs before every restore, on the thread of Probe. REQUIRES: set
  // before Probe may run (before the coordinator starts).
  void set_before_restore(std::function<void()> hook) { before_restore_ = std::move(hook); }

  // The first session's error, if any.
  absl::Status status() const;
  // Runs `fn` on the current session.
  absl::Status Call(const std::function<absl::Status(const ClientSession&)>& fn);

  absl::StatusOr<PsProbe> Probe(int ps_task, int64_t generation);

  struct Restore {
    std::string from;  // checkpoint prefix; empty when initialized
    int64_t step = 0;  // the global step after the restore
    // The coordinator's ps generation from the restore on: values of
    // closures that began earlier ran before it, and their updates are
    // either in the checkpoint or lost.
    int64_t generation = 0;
  };
  // The latest restore not taken yet (consecutive ones: the last).
  std::optional<Restore> TakeRestore();

 private:
  const Scope& root_;
  const SessionOptions options_;
  const TrainingState* const state_;
  const std::vector<Output> variables_;
  const std::string checkpoint_dir_;
  std::function<void()> before_restore_;
  mutable absl::Mutex mu_;
  std::unique_ptr<ClientSession> session_ ABSL_GUARDED_BY(mu_);
  std::optional<Restore> restore_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fashion_mnist
}  // namespace distflow

#endif  // DISTFLOW_EXAMPLES_FASHION_MNIST_CHIEF_SESSION_H_
