// ClusterCoordinator: parameter-server training from one client, as
// tf.distribute.coordinator.ClusterCoordinator does it.
//
// The coordinator holds one session per worker task and
// max_inflight_closures threads per worker. Schedule() puts a closure — a
// registered function and its arguments — in a bounded queue and returns its
// RemoteValue at once; each worker thread takes closures and runs them, one
// at a time, on its worker, where the function's unplaced nodes run while
// its variables live on the ps tasks.
//
// Failures (every wait bounded): a closure whose worker fails (Unavailable,
// Aborted, a restarted incarnation, or a worker that stops answering, caught
// by the deadline on every call) is put back and runs on another worker; the
// lost worker's thread polls it with backoff, and when it answers again makes
// a fresh session, rebuilds its per-worker resources and takes closures
// again. A closure is tried at most `max_attempts` times. Errors naming a ps
// task are ignored up to TransientPsFailureThreshold() per task, then raised
// as Unavailable — unless parameter-server recovery is on
// (ps_recovery_timeout > 0): then such an error stops dispatch while the
// coordinator waits, bounded, for the task to answer again (PsRecovery);
// when the owner's probe restored it from a checkpoint, every worker makes a
// fresh session and rebuilds its per-worker resources before closures run
// again. Past the timeout the job ends with Unavailable naming the task. The first non-retryable
// error cancels the queued closures (their values become Cancelled) and is raised once by Schedule,
// Join or Done, then cleared.
//
// Beyond TF: workers can be added and removed while the coordinator runs,
// closures count their attempts, and counters() reports what happened.
//
// Thread-safe: any thread may schedule, join and fetch.
#ifndef DISTFLOW_COORDINATOR_CLUSTER_COORDINATOR_H_
#define DISTFLOW_COORDINATOR_CLUSTER_COORDINATOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/cluster.pb.h"
#include "distflow/config.pb.h"
#include "distflow/coordinator/closure_queue.h"
#include "distflow/coordinator/per_worker_values.h"
#include "distflow/coordinator/ps_recovery.h"
#include "distflow/coordinator/remote_value.h"
#include "distflow/framework/tensor.h"
#include "distflow/graph.pb.h"

namespace distflow {

class CoordinatorWorker;
enum class WorkerOrigin;

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

// An argument of a scheduled closure: a tensor for every worker, or a
// per-worker value resolved on the worker that runs the closure.
using ClosureArg = std::variant<Tensor, PerWorkerValues>;

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

class ClusterCoordinator {
 public:
  using FunctionId = int;

  // Starts max_inflight_closures threads per task of the worker job.
  // InvalidArgument naming the option for options out of range. Reaches no
  // worker yet:
  // a worker that is down at the start is recovered like a lost one.
  static absl::StatusOr<std::unique_ptr<ClusterCoordinator>> Create(CoordinatorOptions options);
  // Stops the worker threads; closures still queued are cancelled.
  ~ClusterCoordinator();
  ClusterCoordinator(const ClusterCoordinator&) = delete;
  ClusterCoordinator& operator=(const ClusterCoordinator&) = delete;

  // Makes `fn` schedulable. Its graph joins every worker's session (names
  // must not clash with functions registered before).
  absl::StatusOr<FunctionId> RegisterFunction(WorkerFunction fn);

  // Runs `fn` once on `worker_index` outside the queue (the chief's own
  // calls: variable initialization, evaluation). Bounded by call_timeout. A
  // failure of the worker itself (e.g. it restarted) also puts it into
  // recovery, so a later call can succeed.
  absl::StatusOr<std::vector<Tensor>> RunOnWorker(FunctionId fn, int worker_index,
                                                  const std::vector<Tensor>& args);

  // Queues `fn` with `args` and returns its value. Raises the pending error,
  // if any (see above). DeadlineExceeded when the queue stayed full for
  // schedule_timeout.
  absl::StatusOr<RemoteValue> Schedule(FunctionId fn, std::vector<ClosureArg> args);

  // Waits until every scheduled closure is done, at most `timeout`; raises
  // the pending error.
  absl::Status Join(absl::Duration timeout);
  // True iff every scheduled closure is done; raises the pending error.
  absl::StatusOr<bool> Done();

  // Runs `fn` (no args) on every worker and keeps its results per worker;
  // it runs again on a worker that recovers (its value is aborted between).
  // Typical use: an iterator over a per-worker dataset.
  absl::StatusOr<PerWorkerValues> CreatePerWorkerResource(FunctionId fn);
  // As TensorFlow's create_per_worker_dataset: CreatePerWorkerResource for a
  // function that makes the worker's iterator and returns its string handle
  // (IteratorToStringHandle); a closure takes the values as an argument and
  // reads through IteratorFromStringHandleV2 on the worker that runs it.
  absl::StatusOr<PerWorkerValues> CreatePerWorkerDataset(FunctionId fn) {
    return CreatePerWorkerResource(fn);
  }

  // Adds the worker task `task_index` of the worker job at `address` (its
  // server's own task), which starts taking closures. AlreadyExists when the
  // task is there, ResourceExhausted when max_workers are.
  absl::Status AddWorker(int task_index, const std::string& address);
  // A server that asked to join (`distflow server --join`): AddWorker for a
  // task of the worker job, then the number of workers. InvalidArgument
  // for another job, AddWorker's errors otherwise. Such a worker ends no
  // job: an error of its own retires it (see CoordinatorWorker).
  absl::StatusOr<int> RegisterJoiningWorker(const std::string& job, int task_index,
                                            const std::string& address);
  // Stops giving closures to the worker; its closures in flight, if any,
  // finish or are put back. NotFound for an unknown task.
  absl::Status RemoveWorker(int task_index);

  // Parameter-server recovery for a caller outside the worker threads (the
  // chief's own session): read ps_generation() before a call to ps task
  // `ps_task`; when the call fails retryably, RecoverPs waits for the task
  // as a failed closure would (at once when a recovery ended since). OK once
  // it answers (what PsRecovery::Recover found); its error, which also ends
  // the job, otherwise. FailedPrecondition when recovery is off.
  int64_t ps_generation() const;
  absl::StatusOr<PsProbe> RecoverPs(int ps_task, int64_t seen_generation, const absl::Status& why);

  CoordinatorCounters counters() const;
  int num_workers() const;
  // Every worker task, by task index.
  std::vector<CoordinatorWorkerState> worker_states() const;
  // Every ps task of the cluster, by task index.
  std::vector<CoordinatorPsState> ps_states() const;
  // The job of the parameter servers (CoordinatorOptions::ps_job).
  const std::string& ps_job() const { return options_.ps_job; }

 private:
  friend class CoordinatorWorker;
  struct Function {
    FunctionId id;
    WorkerFunction spec;
  };
  struct PerWorkerResource {
    FunctionId fn;
    PerWorkerValues values;
  };

  explicit ClusterCoordinator(CoordinatorOptions options);
  absl::Status AddWorker(int task_index, const std::string& address, WorkerOrigin origin);

  // Runs a closure's function on `worker_index`; its failures are handled
  // by the worker's thread.
  absl::StatusOr<std::vector<Tensor>> RunClosureOn(FunctionId fn, int worker_index,
                                                   const std::vector<Tensor>& args);
  // Called by worker threads.
  std::shared_ptr<const Function> function(FunctionId id) const;
  std::vector<std::shared_ptr<const Function>> functions() const;
  std::vector<std::shared_ptr<PerWorkerResource>> resources() const;
  // A ps failure report; true iff the threshold for that task is passed.
  bool ReportPsFailure(int ps_task);
  // Called by a worker thread whose worker is still down: fails the queue
  // when no worker has been up for the worker wait.
  void FailIfEveryWorkerLost();
  // The cluster a worker's session sees: the ps job and the worker job with
  // that worker at `task_index`.
  ClusterDef ClusterFor(int task_index, const std::string& address) const;
  std::shared_ptr<CoordinatorWorker> FindWorker(int task) const;

  const CoordinatorOptions options_;
  const int ps_failure_threshold_;
  ClosureQueue queue_;

  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<const Function>> functions_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<PerWorkerResource>> resources_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<CoordinatorWorker>> workers_ ABSL_GUARDED_BY(mu_);
  std::vector<int> ps_failures_ ABSL_GUARDED_BY(mu_);

  std::atomic<int64_t> scheduled_{0}, done_{0}, retried_{0}, failed_{0};
  std::atomic<int64_t> worker_failures_{0}, recoveries_{0};
  // Null while parameter-server recovery is off.
  std::unique_ptr<PsRecovery> ps_recovery_;
};

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_CLUSTER_COORDINATOR_H_
