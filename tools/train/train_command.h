// `distflow train`: trains a Fashion-MNIST classifier, printing a progress
// line every --progress-every steps and a summary.
//
// - In this process (examples/fashion_mnist/trainer.h) by default.
// - On a parameter-server cluster through the ClusterCoordinator
//   (examples/fashion_mnist/cluster_trainer.h) with --ps N --workers M (a
//   local cluster of `distflow server` processes this command starts and
//   stops), --cluster "ps=...;worker=..." (servers already running), or
//   TF_CONFIG when neither is given. --kill-worker-every S kills a random
//   local worker every S seconds and restarts it, to show failover;
//   --chaos SPEC kills and cuts off workers and ps tasks (train/chaos.h).
//   --accept-workers HOST:PORT lets `distflow server --join` add workers
//   while training runs.
//
// With --output json, stdout holds only the summary as one JSON line
//   {"model","epochs","steps","train_loss","test_accuracy","seconds",
//    "examples_per_second"}
// plus, on a cluster, "closures","retried_closures","worker_failures",
// "recoveries","ps_failures","ps_recoveries","steps_lost","checkpoints",
// "checkpoint_pause_max_ms"; progress goes to stderr. Thread-compatible: one call at a
// time.
#ifndef DISTFLOW_TOOLS_TRAIN_COMMAND_H_
#define DISTFLOW_TOOLS_TRAIN_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "fashion_mnist/trainer.h"

namespace distflow {

struct TrainFlags {
  fashion_mnist::TrainOptions options;
  std::string output = "text";  // "text" or "json"
  // Cluster training (all zero or empty: in this process).
  int ps = 0;
  int workers = 0;
  std::string cluster;
  int64_t steps_per_execution = 1;
  int max_inflight_closures = 1;  // ClusterTrainOptions' default
  int64_t min_shard_bytes = 0;
  double kill_worker_every = 0;  // seconds; 0: never
  std::string chaos;             // train/chaos.h's SPEC; empty: none
  double call_timeout = 30;      // seconds
  double worker_wait = 600;      // seconds
  double startup_deadline = 60;  // seconds
  // Checkpoints within epochs (with --checkpoint-dir); 0: never.
  int64_t checkpoint_every_steps = 0;
  double checkpoint_every_seconds = 0;
  // Seconds a lost ps task is awaited; < 0: kDefaultPsRecoveryTimeout with
  // a checkpoint directory, else off (a lost ps ends the job).
  double ps_recovery_timeout = -1;
  std::string server_log;      // local servers' stderr; empty: discarded
  std::string accept_workers;  // host:port where servers may join; empty: none
  std::string logdir;          // TensorBoard event files go here; empty: none
  int status_port = -1;        // the status page's port; -1: none, 0: a free one
  std::string status_bind = "127.0.0.1";
};

// The ps recovery timeout when --checkpoint-dir is given and
// --ps-recovery-timeout is not.
inline constexpr double kDefaultPsRecoveryTimeoutSeconds = 60;

// Adds train's flags to `app`.
void AddTrainFlags(CLI::App* app, TrainFlags* flags);

// Trains and reports. InvalidArgument for a bad --output; otherwise the
// trainer's errors.
absl::Status RunTrainCommand(const TrainFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_TRAIN_COMMAND_H_
