// What a ClusterCoordinator is given — its options and the functions it
// runs on workers — and what it reports of its closures and tasks. Plain
// values; the coordinator (cluster_coordinator.h) and each of its workers
// (coordinator_worker.h) read them.
#ifndef DISTFLOW_COORDINATOR_COORDINATOR_OPTIONS_H_
#define DISTFLOW_COORDINATOR_COORDINATOR_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "distflow/cluster.pb.h"
#include "distflow/config.pb.h"
#include "distflow/coordinator/ps_recovery.h"
#include "distflow/graph.pb.h"

namespace distflow {

// CoordinatorOptions::max_inflight_closures: its default, and the most it
// lets one worker run at once (each closure in flight takes a thread).
// The default is measured (bench/coordinator_bench, 1 ps and 2 workers on
// one 2-core machine shared with builds, medians of 5 runs): closures/s
// with 1 / 4 / 8 / 16 in flight per worker were 5153 / 7704 / 10576 /
// 11236 for a trivial function and 2056 / 3108 / 4137 / 3793 for one that
// updates a variable on the ps: 8 has about all the gain of 16 with half
// the threads.
inline constexpr int kDefaultInflightClosures = 8;
inline constexpr int kMaxInflightClosures = 256;

struct CoordinatorOptions {
  // The whole cluster: a "ps" job and a "worker" job (job names below).
  ClusterDef cluster;
  std::string ps_job = "ps";
  std::string worker_job = "worker";
  // Schedule blocks while this many closures are queued, at most
  // schedule_timeout.
  size_t max_queued_closures = 256;
  absl::Duration schedule_timeout = absl::Minutes(5);
  // Closures in flight per worker, each on a thread of its own through the
  // worker's one session: a closure's run is mostly waiting on RPCs, so
  // several at once keep a worker busy. In [1, kMaxInflightClosures].
  int max_inflight_closures = kDefaultInflightClosures;
  // Deadline of every call to a worker, a closure's run included: a worker
  // that answers nothing for this long is taken as failed.
  absl::Duration call_timeout = absl::Seconds(30);
  // A lost worker is polled every recovery_backoff_min at first, doubling up
  // to recovery_backoff_max.
  absl::Duration recovery_backoff_min = absl::Milliseconds(100);
  absl::Duration recovery_backoff_max = absl::Seconds(2);
  // A closure that failed with its worker this many times fails for good.
  int max_attempts = 20;
  // The worker wait: once no worker has been usable for this long, the job
  // fails with Unavailable naming every worker (raised by Schedule, Join or
  // Done as a closure's error is), rather than waiting for them forever.
  absl::Duration worker_wait = absl::Minutes(10);
  // The startup deadline: a worker of the cluster that has never answered
  // is awaited this long from its start; then the job fails with
  // Unavailable naming its task, address and why it does not answer (a
  // mistyped address fails fast). Meanwhile a line every
  // startup_report_every says what is awaited and why.
  absl::Duration startup_deadline = absl::Seconds(60);
  absl::Duration startup_report_every = absl::Seconds(5);
  // AddWorker refuses a worker beyond this many (each has a thread).
  int max_workers = 256;
  // Transient ps failures ignored per ps task; -1 reads
  // TF_COORDINATOR_IGNORE_TRANSIENT_PS_FAILURES (default 3).
  int transient_ps_failures = -1;
  // Parameter-server recovery: off while zero. When on, `probe_ps` must be
  // set; it is called with the failed ps task (PsRecovery::Probe) until it
  // answers or this much time has passed.
  absl::Duration ps_recovery_timeout = absl::ZeroDuration();
  PsRecovery::Probe probe_ps;
  // Seeing where closures run (off by default): every run on a worker uses
  // `run_options` (trace_level, output_partition_graphs; its timeout is
  // call_timeout's), and when `on_run_metadata` is set it gets the worker
  // task and the RunMetadata of each run that succeeded, on one of that
  // worker's threads (so it must be thread-safe).
  RunOptions run_options;
  std::function<void(int worker_task, const RunMetadata&)> on_run_metadata;
};

// A function the coordinator runs on workers: a graph built with the client
// API. Each worker's session is on that worker's own master, whose task is
// the client device, so nodes with no device run on the worker that runs
// the closure (as TensorFlow's coordinator runs a
// function under "with ops.device(worker)"), while nodes that use a
// variable sit with the variable on its ps task. `args`
// name the tensors fed (in Schedule's order), `results` the tensors fetched,
// `targets` nodes run for their effect.
struct WorkerFunction {
  GraphDef graph;
  std::vector<std::string> args;
  std::vector<std::string> results;
  std::vector<std::string> targets;
};

struct CoordinatorCounters {
  int64_t scheduled = 0;
  int64_t queued = 0;
  int64_t in_flight = 0;
  int64_t done = 0;     // closures that ran to the end on a worker
  int64_t retried = 0;  // closures put back after a worker or ps failure
  int64_t failed = 0;   // closures whose own error was raised
  int64_t worker_failures = 0;
  int64_t recoveries = 0;
  int workers_up = 0;
  // Parameter-server recovery: times a ps was awaited (it did not answer at
  // once or had lost its state) and times it was restored.
  int64_t ps_failures = 0;
  int64_t ps_recoveries = 0;
};

// One parameter server task as the coordinator sees it
// (ClusterCoordinator::ps_states).
struct CoordinatorPsState {
  int task = 0;
  std::string address;
  // Closures put back because this task failed them (Unavailable or
  // DeadlineExceeded from it), closures in flight together on one worker
  // counted once; past CoordinatorOptions' transient_ps_failures the job
  // ends with Unavailable naming it.
  int64_t failures = 0;
  bool lost = false;  // failures passed the threshold
};

// One worker as the coordinator sees it (ClusterCoordinator::worker_states).
struct CoordinatorWorkerState {
  int task = 0;
  std::string address;
  bool up = false;
  int64_t closures_done = 0;      // closures that ran to the end on this worker
  int64_t failures = 0;           // times it was found lost
  std::string last_error;         // why it was last lost; empty if never
  int64_t last_error_micros = 0;  // when (NowMicros); 0 if never
};

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_COORDINATOR_OPTIONS_H_
