// Trains a Fashion-MNIST classifier (model.h) on a parameter-server cluster
// from one client, through a ClusterCoordinator: the model's
// variables and Adam's slots live on the ps tasks (round-robin, large
// weights optionally split over them), every worker runs the training
// step on batches from its own dataset iterator, and the client only
// schedules closures and reads their results.
//
// - Per-worker dataset: each worker holds an iterator over the shuffled,
//   repeated training records (its own shuffle order), built by
//   CreatePerWorkerDataset and rebuilt when the worker comes back after a
//   failure. A training closure takes the iterator's string handle as its
//   argument and runs `steps_per_execution` steps in one call.
// - An epoch is ceil(train examples / batch size) steps, scheduled as
//   closures; a closure whose worker dies or freezes runs again elsewhere.
// - Evaluation after every epoch: one closure per test batch, so it too
//   survives worker failures.
// - The chief's own session (on ps task 0's master) initializes or restores
//   the variables and, with a checkpoint directory, saves after every epoch
//   and, when asked, every checkpoint_every_steps steps or
//   checkpoint_every of time. Those within epochs are written off the
//   training path: the chief snapshots the variables (the only pause of its
//   scheduling; the workers train on from the queue meanwhile) and one
//   background thread writes the snapshot and lists it in the index
//   (checkpoint_writer.h); a write fails alone, leaving the previous
//   checkpoint the latest. A new run resumes after the last saved epoch.
// - With a ps recovery timeout, a ps task that dies or is cut off is
//   awaited (ClusterCoordinator's parameter-server recovery): when it
//   answers with its variables the job just goes on; when it came back
//   empty the chief restores the last checkpoint onto it (or initializes
//   when there is none), and training resumes from the checkpoint's global
//   step — the steps done since are lost and done again. With
//   train.export_saved_model it reads the trained weights from the ps tasks
//   after the last evaluation and exports them (export.h).
//
// TrainOnCluster is a blocking call; run one at a time per checkpoint
// directory. `on_progress` runs on the calling thread.
#ifndef DISTFLOW_EXAMPLES_FASHION_MNIST_CLUSTER_TRAINER_H_
#define DISTFLOW_EXAMPLES_FASHION_MNIST_CLUSTER_TRAINER_H_

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "distflow/coordinator/cluster_coordinator.h"
#include "distflow/coordinator/parameter_server_strategy.h"
#include "fashion_mnist/trainer.h"

namespace distflow {
namespace fashion_mnist {

struct ClusterTrainOptions {
  TrainOptions train;
  // Training steps one closure runs (TensorFlow's steps_per_execution).
  int64_t steps_per_execution = 1;
  // Closures in flight per worker (CoordinatorOptions::max_inflight_closures).
  // 1, not the coordinator's default: closures in flight together read the
  // same weights, so each more is one more stale gradient, as a worker more
  // would be (10 closures of 4 steps on 2 workers: one run each reached a
  // test accuracy of 0.41 with 8 in flight and 0.46 with 4; runs with 1
  // stay above 0.5).
  int max_inflight_closures = 1;
  // Deadline of every call to a worker; a worker silent this long is lost.
  absl::Duration call_timeout = absl::Seconds(30);
  // How long the job waits while no worker is usable before it fails with
  // Unavailable naming them (CoordinatorOptions::worker_wait).
  absl::Duration worker_wait = absl::Minutes(10);
  // How long a worker that has never answered is awaited before the job
  // fails naming it (CoordinatorOptions::startup_deadline).
  absl::Duration startup_deadline = absl::Seconds(60);
  // Checkpoints within an epoch (with train.checkpoint_dir): every this
  // many steps and/or this much time; zero: at the ends of epochs only.
  int64_t checkpoint_every_steps = 0;
  absl::Duration checkpoint_every = absl::ZeroDuration();
  // How long a lost ps task is awaited before the job fails naming it;
  // zero: a ps failing more often than the transient threshold ends the
  // job at once.
  absl::Duration ps_recovery_timeout = absl::ZeroDuration();
  // Called with the coordinator once it runs and with nullptr before it
  // goes (e.g. to let workers join it); may be empty.
  std::function<void(ClusterCoordinator*)> on_coordinator;
};

// Reported every progress_every steps (training figures over the steps
// since the previous report) and after each epoch's evaluation (then
// test_accuracy >= 0 and train.loss is the epoch's mean loss).
struct ClusterTrainProgress {
  TrainProgress train;
  CoordinatorCounters counters;
  int workers = 0;
  double test_accuracy = -1;
};

struct ClusterTrainResult {
  TrainResult train;
  CoordinatorCounters counters;  // ps_failures and ps_recoveries included
  // Steps undone by parameter-server restores (done again after them).
  int64_t steps_lost = 0;
  // Checkpoints written within epochs (listed in the index; a failed
  // background write is not counted), and the longest and mean time a
  // snapshot for one held back scheduling, in seconds (the wait for the
  // previous write included).
  int64_t checkpoints = 0;
  double checkpoint_pause_max = 0, checkpoint_pause_mean = 0;
};

// Trains on the strategy's cluster as the options say. Errors: those of
// Train (trainer.h), InvalidArgument for steps_per_execution outside
// [1, kMaxStepsPerExecution] or max_inflight_closures outside
// [1, kMaxInflightClosures], the coordinator's errors (Unavailable naming
// a ps task that stayed down), a non-finite loss.
absl::StatusOr<ClusterTrainResult> TrainOnCluster(
    const ParameterServerStrategy& strategy, const ClusterTrainOptions& options,
    const std::function<void(const ClusterTrainProgress&)>& on_progress);

// Each step of a closure is its own copy in the graph.
inline constexpr int64_t kMaxStepsPerExecution = 64;

}  // namespace fashion_mnist
}  // namespace distflow

#endif  // DISTFLOW_EXAMPLES_FASHION_MNIST_CLUSTER_TRAINER_H_
