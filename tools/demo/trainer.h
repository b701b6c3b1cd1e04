// Between-graph parameter-server training, written with distflow:
// learn y = 2x + 10 from noisy samples. The weight and bias live on the
// parameter servers (placed round-robin by the replica device setter), each
// worker is its own client (between-graph replication) computing gradients
// on its own batches, and updates are either
//  - async: every worker applies its gradients as soon as it has them, or
//  - sync:  gradients of all workers are averaged in conditional
//           accumulators on the ps (stale ones dropped), the chief applies
//           one update per step and releases the workers through a token
//           queue.
// The chief checkpoints the variables periodically and, when started again
// with the same directory, resumes from the latest checkpoint, the global
// step counting on from there.
#ifndef DISTFLOW_TOOLS_DEMO_TRAINER_H_
#define DISTFLOW_TOOLS_DEMO_TRAINER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "distflow/cluster.pb.h"

namespace distflow {

struct TrainerOptions {
  std::string mode = "async";  // "async" or "sync"
  int workers = 2;
  int ps = 1;
  int64_t steps = 300;  // train until the global step reaches this
  int batch_size = 32;
  float learning_rate = 0.1f;
  float noise = 0.33f;  // std dev of the noise added to y
  int64_t seed = 1;
  std::string checkpoint_dir;  // empty: no checkpoints
  int64_t checkpoint_every = 50;
  int64_t step_timeout_ms = 30000;
  // By default a NaN or infinite loss, weight or bias (diverged training,
  // a damaged checkpoint) stops the job with InvalidArgument.
  bool allow_nonfinite = false;
};

struct TrainerResult {
  std::string mode;
  int64_t steps = 0;       // the final global step
  int64_t start_step = 0;  // the step training started from (restored)
  int64_t updates = 0;     // updates applied to the variables by this run
  double loss = 0;         // the chief's loss at the end
  double weight = 0, bias = 0;
  double seconds = 0;
  std::string restored_from;  // checkpoint prefix, empty when fresh
};

// What the job reports while it runs.
struct TrainerProgress {
  int64_t step;
  double loss, weight, bias;
};

// Trains on the cluster described by `cluster` (one "ps" job, one "worker"
// job), whose tasks are already serving. `on_progress` is called from the
// chief's thread after every step; `stop` ends training early (e.g. on
// Ctrl-C) after a final checkpoint. Fails with the first error of any
// worker (a task that died is Unavailable/Aborted naming the task).
absl::StatusOr<TrainerResult> TrainLinearRegression(
    const TrainerOptions& options, const ClusterDef& cluster,
    const std::function<void(const TrainerProgress&)>& on_progress, const std::atomic<bool>* stop);

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_DEMO_TRAINER_H_
