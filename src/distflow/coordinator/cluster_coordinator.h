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
#include "distflow/coordinator/coordinator_options.h"
#include "distflow/coordinator/per_worker_values.h"
#include "distflow/coordinator/ps_recovery.h"
#include "distflow/coordinator/remote_value.h"
#include "distflow/coordinator/worker_host.h"
#include "distflow/framework/tensor.h"
#include "distflow/graph.pb.h"

namespace distflow {

class CoordinatorWorker;
enum class WorkerOrigin;

// An argument of a scheduled closure: a tensor for every worker, or a
// per-worker value resolved on the worker that runs the closure.
using ClosureArg = std::variant<Tensor, PerWorkerValues>;

class ClusterCoordinator : private WorkerHost {
 public:
  using FunctionId = int;

  // Starts max_inflight_closures threads per task of the worker job.
  // InvalidArgument naming the option for options out of range. Reaches no
  // worker yet:
  // a worker that is down at the start is recovered like a lost one.
  static absl::StatusOr<std::unique_ptr<ClusterCoordinator>> Create(CoordinatorOptions options);
  // Stops the worker threads; closures still queued are cancelled.
  ~ClusterCoordinator() override;
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
  int64_t ps_generation() const override;
  absl::StatusOr<PsProbe> RecoverPs(int ps_task, int64_t seen_generation,
                                    const absl::Status& why) override;

  CoordinatorCounters counters() const;
  int num_workers() const;
  // Every worker task, by task index.
  std::vector<CoordinatorWorkerState> worker_states() const;
  // Every ps task of the cluster, by task index.
  std::vector<CoordinatorPsState> ps_states() const;
  // The job of the parameter servers (CoordinatorOptions::ps_job).
  const std::string& ps_job() const { return options_.ps_job; }

 private:
  explicit ClusterCoordinator(CoordinatorOptions options);
  absl::Status AddWorker(int task_index, const std::string& address, WorkerOrigin origin);

  // Runs a closure's function on `worker_index`; its failures are handled
  // by the worker's thread.
  absl::StatusOr<std::vector<Tensor>> RunClosureOn(FunctionId fn, int worker_index,
                                                   const std::vector<Tensor>& args);
  std::shared_ptr<CoordinatorWorker> FindWorker(int task) const;

  // WorkerHost: what the workers use.
  const CoordinatorOptions& options() const override { return options_; }
  ClosureQueue& queue() override { return queue_; }
  CoordinatorTally& tally() override { return tally_; }
  std::shared_ptr<const RegisteredFunction> function(int id) const override;
  std::vector<std::shared_ptr<const RegisteredFunction>> functions() const override;
  std::vector<std::shared_ptr<PerWorkerResource>> resources() const override;
  ClusterDef ClusterFor(int task_index, const std::string& address) const override;
  void FailIfEveryWorkerLost() override;
  bool ps_recovery_on() const override { return ps_recovery_ != nullptr; }
  bool ReportPsFailure(int ps_task) override;
  int ps_failure_threshold() const override { return ps_failure_threshold_; }

  const CoordinatorOptions options_;
  const int ps_failure_threshold_;
  ClosureQueue queue_;
  CoordinatorTally tally_;

  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<const RegisteredFunction>> functions_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<PerWorkerResource>> resources_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<CoordinatorWorker>> workers_ ABSL_GUARDED_BY(mu_);
  std::vector<int> ps_failures_ ABSL_GUARDED_BY(mu_);

  // Null while parameter-server recovery is off.
  std::unique_ptr<PsRecovery> ps_recovery_;
};

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_CLUSTER_COORDINATOR_H_
