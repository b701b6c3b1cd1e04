// CoordinatorWorker: the coordinator's side of one worker task — its
// session, its thread, and whether it is up (TensorFlow's coordinator Worker plus
// its share of the failure handler).
//
// The worker has CoordinatorOptions::max_inflight_closures threads, each
// taking closures from the coordinator's queue while the worker is up and
// running one at a time through the worker's one (thread-safe) session: so
// up to that many closures are in flight on it. The first thread is also
// the recovery thread. When a closure fails because of the worker, the
// closure goes back to the queue and the worker is taken down; the other
// closures in flight on it fail or finish on their own threads, each put
// back or done exactly once. The recovery thread polls the worker with
// backoff, makes a fresh session (the old one died with the worker's
// master), re-registers the functions, reruns the per-worker resources, and
// the threads take closures again. Every call carries the coordinator's call
// deadline, so a frozen worker is a failed worker, not a hang.
//
// One failure takes the worker down once: a closure remembers the up-epoch
// it started in (see up_epoch_), and its failure takes the worker down only
// from that epoch, so the late failures of closures that ran on the lost
// incarnation neither count again nor take down the recovered worker.
// Likewise a ps task's failure counts toward the coordinator's transient
// threshold once per worker for the closures that were in flight together
// when it was counted: one blip does not count max_inflight_closures
// times. With one closure at a time every failure counts, as it always did.
//
// A worker that joined while the coordinator ran (RegisterJoiningWorker,
// on a port a stranger may reach) is trusted with no error that ends the
// job: where a worker of the cluster would report the function's error
// (its closure, or building a per-worker resource), a joined worker is
// retired instead — it takes no more closures and its closure runs
// elsewhere.
//
// Thread-safe; Run may be called from any thread.
#ifndef DISTFLOW_COORDINATOR_COORDINATOR_WORKER_H_
#define DISTFLOW_COORDINATOR_COORDINATOR_WORKER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "distflow/common_runtime/session.h"
#include "distflow/coordinator/closure.h"
#include "distflow/coordinator/coordinator_options.h"
#include "distflow/coordinator/worker_host.h"
#include "distflow/framework/tensor.h"

namespace distflow {

enum class WorkerOrigin { kCluster, kJoined };

class CoordinatorWorker {
 public:
  // `host` outlives the worker.
  CoordinatorWorker(WorkerHost* host, int task, std::string address, WorkerOrigin origin);
  // Stops and joins the thread.
  ~CoordinatorWorker();
  CoordinatorWorker(const CoordinatorWorker&) = delete;
  CoordinatorWorker& operator=(const CoordinatorWorker&) = delete;

  void Start();
  // Asks the threads to stop and waits for them (at most one call deadline
  // when calls are in progress).
  void Stop();

  int task() const { return task_; }
  const std::string& address() const { return address_; }
  bool up() const { return IsUp(up_epoch_.load(std::memory_order_acquire)); }
  CoordinatorWorkerState state() const;
  // While !up(): since when the worker has been down (its creation when it
  // was never up; InfiniteFuture while MarkDown is under way) and the latest
  // reason.
  struct Down {
    absl::Time since;
    absl::Status why;
  };
  Down down() const;

  // Runs function `fn` with `args` on this worker through its session.
  absl::StatusOr<std::vector<Tensor>> Run(int fn, const std::vector<Tensor>& args);
  // Takes the worker out of service after `why` (a failure of the worker
  // itself); its recovery thread recovers it. No-op while it is down already.
  void MarkDown(const absl::Status& why);
  // Takes the worker out of service, not as a failure of its own: a ps task
  // it used was restored, so its thread makes a fresh session and rebuilds
  // the per-worker resources (not counted as a worker failure or recovery).
  void Rebuild();

 private:
  static bool IsUp(int64_t epoch) { return (epoch & 1) != 0; }
  // The recovery thread: recovers the worker while it is down, and runs
  // closures while it is up.
  void Loop();
  // Each other thread: runs closures while the worker is up.
  void RunClosures();
  // Takes one closure from the queue, if one comes within a poll, and runs
  // it. REQUIRES: the worker was up at `epoch`.
  void TakeAndProcess(int64_t epoch);
  // Runs one closure taken while the worker was up at `epoch` and tells the
  // queue how it ended.
  void Process(std::shared_ptr<Closure> closure, int64_t epoch);
  // Whether a failure naming ps task `ps_task`, seen by the run with ticket
  // `run`, counts toward the transient threshold: true iff that run began
  // after the previous counted failure of the task on this worker.
  bool CountPsFailure(int ps_task, int64_t run);
  // MarkDown, iff the worker is still up at `epoch`: a failure seen by a
  // call that began before the worker was last lost is that loss's.
  void MarkDownFrom(int64_t epoch, const absl::Status& why);
  // Takes the worker down from the up-epoch it is in; false iff it was down.
  bool TakeDown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(down_mu_);
  // What follows taking the worker down after its failure `why`: counted,
  // its per-worker resources aborted, its session dropped.
  void Lost(const absl::Status& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(down_mu_);
  // Makes a session, registers the functions and rebuilds the per-worker
  // resources. OK iff the worker is usable.
  absl::Status Recover();
  // The session, with every registered function in it.
  absl::StatusOr<std::shared_ptr<Session>> SessionWithFunctions();
  // Sleeps `d` or until Stop; false when stopping.
  bool SleepFor(absl::Duration d);
  // The worker has never answered: past the startup deadline the job
  // fails naming it; before, a line every startup_report_every says why.
  void WaitingAtStartup(const absl::Status& why);
  // Takes a joined worker out of service for good after `why`.
  void Retire(const absl::Status& why);
  // Drops the session; the next call makes a new one.
  void ResetSession();

  WorkerHost* const host_;
  const int task_;
  const std::string address_;
  const WorkerOrigin origin_;
  // Odd while the worker is up, even while it is down; every change adds
  // one. Taking the worker down is a compare-and-swap from an odd value, so
  // of all the failures seen in one up-epoch exactly one takes it down.
  std::atomic<int64_t> up_epoch_{0};
  std::atomic<bool> retired_{false};
  // Whether the worker was ever up; only the recovery thread touches it.
  bool ever_up_ = false;
  const absl::Time started_;
  // Only the recovery thread touches these.
  absl::Time next_startup_report_ = absl::InfinitePast();
  bool startup_failed_ = false;
  // Whether the job was failed because the worker refused a function.
  bool function_refused_ = false;
  // Set by Rebuild: the next Recover is not a recovery from a failure.
  std::atomic<bool> rebuilding_{false};
  absl::Notification stop_;
  // Held while the worker is taken down and its loss recorded (MarkDown,
  // Rebuild, Retire), and by the recovery thread while it reads up_epoch_,
  // so that it never recovers a worker whose loss is half recorded. Taken
  // with no other lock held; mu_, session_mu_ and the coordinator's lock
  // are taken under it.
  absl::Mutex down_mu_;
  // threads_[0] is the recovery thread.
  std::vector<std::thread> threads_;

  std::atomic<int64_t> closures_done_{0};
  std::atomic<int64_t> failures_{0};
  // Closure runs begun on this worker: each run's ticket, in start order.
  std::atomic<int64_t> runs_started_{0};
  // Per ps task, runs_started_ when its last failure here was counted.
  // Taken with no other lock held.
  absl::Mutex ps_failure_mu_;
  absl::flat_hash_map<int, int64_t> ps_failure_counted_at_ ABSL_GUARDED_BY(ps_failure_mu_);

  // What state() reads; never held across a call to the worker, so that a
  // status page reads it while a session is being made. The recovery thread
  // brings the worker up under it, which wakes the threads waiting for that.
  mutable absl::Mutex mu_;
  Down down_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  int64_t last_error_micros_ ABSL_GUARDED_BY(mu_) = 0;
  // Serializes making the session and extending it (calls to the worker, up
  // to the call timeout each). Never taken while mu_ is held, nor mu_ under it.
  absl::Mutex session_mu_;
  std::shared_ptr<Session> session_ ABSL_GUARDED_BY(session_mu_);
  size_t functions_in_session_ ABSL_GUARDED_BY(session_mu_) = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_COORDINATOR_WORKER_H_
