// What `distflow train --status-port P` serves while the job runs: a live
// page (/), the same data as JSON (/api/status) and Prometheus metrics
// (/metrics). The trainer reports progress and evaluations here; the
// coordinator's counters are read at each request.
//
// Thread-safe: the trainer's thread reports, the status server's threads
// read.
#ifndef DISTFLOW_TOOLS_TRAIN_TRAIN_STATUS_H_
#define DISTFLOW_TOOLS_TRAIN_TRAIN_STATUS_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distflow/coordinator/cluster_coordinator.h"
#include "distflow/monitoring/histogram.h"
#include "distflow/monitoring/status_server.h"
#include "fashion_mnist/cluster_trainer.h"
#include "nlohmann/json.hpp"
#include "train/ps_load_poller.h"

namespace distflow {

class TrainStatus {
 public:
  // `total_steps`: the steps the run will reach (for the ETA); `workers`
  // and `ps`: 0 for training in this process.
  TrainStatus(std::string model, int64_t epochs, int64_t total_steps, int ps, int workers);

  // Starts serving on `options`' address; the server's errors.
  absl::Status Serve(const StatusServerOptions& options);
  int port() const { return server_ == nullptr ? 0 : server_->port(); }

  // The first coordinator also starts polling its ps tasks' load (variables
  // held, bytes/s) once a second while the server runs.
  void SetCoordinator(ClusterCoordinator* coordinator);
  void ReportProgress(const fashion_mnist::TrainProgress& p, int batch_size);
  void ReportEvaluation(int64_t epoch, int64_t step, double test_accuracy);
  void ReportCheckpoint(const std::string& prefix, int64_t step);
  void ReportDone(const std::string& summary);

  nlohmann::ordered_json Json() const;
  std::string Metrics() const;

 private:
  struct Point {
    int64_t step;
    double loss, accuracy;
  };
  // A worker's closures done at a time, for its closures/s.
  struct RateSample {
    double seconds = 0;  // since the start
    int64_t done = 0;
    double per_second = -1;
  };
  struct LogLine {
    double seconds;  // since the start
    std::string text;
  };
  void LogLocked(std::string text) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Turns changes of the coordinator's counters into log lines.
  void WatchCountersLocked(const CoordinatorCounters& c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  double Elapsed() const;
  // Ends polling the ps tasks (their last answers stay); the caller destroys
  // the poller once mu_ is released.
  std::unique_ptr<PsLoadPoller> StopPollingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<PsLoad> LoadsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The coordinator's counters and worker count; the last ones seen (and
  // the flags' worker count) while there is no coordinator.
  std::pair<CoordinatorCounters, int> CountersLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string model_;
  const int64_t epochs_, total_steps_;
  const int ps_, workers_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  Histogram step_seconds_;

  mutable absl::Mutex mu_;
  ClusterCoordinator* coordinator_ ABSL_GUARDED_BY(mu_) = nullptr;
  int64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t step_ ABSL_GUARDED_BY(mu_) = 0;
  // -1 until the first progress report (the page shows "–").
  double loss_ ABSL_GUARDED_BY(mu_) = -1, accuracy_ ABSL_GUARDED_BY(mu_) = -1;
  double examples_per_second_ ABSL_GUARDED_BY(mu_) = -1;
  double test_accuracy_ ABSL_GUARDED_BY(mu_) = -1;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  // The last checkpoint written: its prefix, step and when (-1: none yet).
  std::string checkpoint_prefix_ ABSL_GUARDED_BY(mu_);
  int64_t checkpoint_step_ ABSL_GUARDED_BY(mu_) = -1;
  double checkpoint_at_ ABSL_GUARDED_BY(mu_) = -1;  // seconds since the start
  int64_t checkpoints_ ABSL_GUARDED_BY(mu_) = 0;
  CoordinatorCounters last_counters_ ABSL_GUARDED_BY(mu_);
  std::vector<CoordinatorPsState> last_ps_ ABSL_GUARDED_BY(mu_);
  std::deque<Point> history_ ABSL_GUARDED_BY(mu_);
  std::deque<LogLine> log_ ABSL_GUARDED_BY(mu_);
  // By worker task; updated by Json at most once a second.
  mutable std::map<int, RateSample> worker_rates_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<PsLoadPoller> ps_poller_ ABSL_GUARDED_BY(mu_);
  std::vector<PsLoad> last_loads_ ABSL_GUARDED_BY(mu_);  // once polling stopped

  // First to go: no request reads the members above once it is destroyed.
  std::unique_ptr<StatusServer> server_;
};

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_TRAIN_TRAIN_STATUS_H_
