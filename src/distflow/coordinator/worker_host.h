// WorkerHost: what a CoordinatorWorker needs of the coordinator that owns
// it, and nothing more — the options, the closure queue, the counters it
// adds to, the registered functions and per-worker resources, the cluster
// its session sees, and the parameter-server rules it must follow when a
// closure fails. ClusterCoordinator implements it (privately: these are
// not part of its public API); a test may implement it to drive one worker
// alone.
//
// Every method is thread-safe: the worker calls them from each of its
// threads.
#ifndef DISTFLOW_COORDINATOR_WORKER_HOST_H_
#define DISTFLOW_COORDINATOR_WORKER_HOST_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distflow/cluster.pb.h"
#include "distflow/coordinator/closure_queue.h"
#include "distflow/coordinator/coordinator_options.h"
#include "distflow/coordinator/per_worker_values.h"
#include "distflow/coordinator/ps_recovery.h"

namespace distflow {

// A function registered with the coordinator; `id` is its index.
struct RegisteredFunction {
  int id = -1;
  WorkerFunction spec;
};

// A per-worker resource: function `fn` run on every worker, its value per
// worker (rebuilt when a worker recovers).
struct PerWorkerResource {
  int fn = -1;
  PerWorkerValues values;
};

// The coordinator's counts of closures and workers that the worker threads
// add to (CoordinatorCounters is what they read as).
struct CoordinatorTally {
  std::atomic<int64_t> scheduled{0};
  std::atomic<int64_t> done{0};
  std::atomic<int64_t> retried{0};
  std::atomic<int64_t> failed{0};
  std::atomic<int64_t> worker_failures{0};
  std::atomic<int64_t> recoveries{0};

  static void Add(std::atomic<int64_t>& counter) {
    counter.fetch_add(1, std::memory_order_relaxed);
  }
};

class WorkerHost {
 public:
  virtual ~WorkerHost() = default;

  virtual const CoordinatorOptions& options() const = 0;
  virtual ClosureQueue& queue() = 0;
  virtual CoordinatorTally& tally() = 0;

  // The function with `id`, or null; every function, by id.
  virtual std::shared_ptr<const RegisteredFunction> function(int id) const = 0;
  virtual std::vector<std::shared_ptr<const RegisteredFunction>> functions() const = 0;
  virtual std::vector<std::shared_ptr<PerWorkerResource>> resources() const = 0;

  // The cluster a worker's session sees: the ps job and the worker job with
  // that worker alone, at `task` and `address`.
  virtual ClusterDef ClusterFor(int task, const std::string& address) const = 0;
  // Called by a worker whose worker is still down: fails the queue when no
  // worker has been up for the worker wait.
  virtual void FailIfEveryWorkerLost() = 0;

  // Parameter-server recovery (see ClusterCoordinator): whether it is on,
  // the generation of restores, and the bounded wait for a ps task.
  virtual bool ps_recovery_on() const = 0;
  virtual int64_t ps_generation() const = 0;
  virtual absl::StatusOr<PsProbe> RecoverPs(int ps_task, int64_t seen_generation,
                                            const absl::Status& why) = 0;
  // With recovery off: counts a transient failure of `ps_task`; true iff
  // the task has now failed more often than ps_failure_threshold().
  virtual bool ReportPsFailure(int ps_task) = 0;
  virtual int ps_failure_threshold() const = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_WORKER_HOST_H_
