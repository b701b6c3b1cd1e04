// The rendezvous of a worker's steps. Every step id gets its own
// RemoteRendezvous, created on first use — by the step's RunGraph, or by a
// peer's RecvTensor that arrives first — and dropped by Cleanup(step_id),
// which the master sends when the step is over (success or failure).
//
// A step only receives have asked for is "unclaimed" until its RunGraph
// (Find) comes: the master may never run it (a stranger's step id), so it
// must not hold memory until a Cleanup that never comes. Such a step is
// dropped when its last waiting receive ends (the caller's deadline or
// cancellation), at most kMaxUnclaimedSteps exist at once, and one older
// than kUnclaimedStepLifetime is aborted (DeadlineExceeded) when the next
// unclaimed step is made.
//
// RemoteRendezvous: Send always stores locally (producers are local); a
// receive whose source device is in this worker's task is served from the
// local table, otherwise it becomes a RecvTensor RPC to the producer's
// worker. Remote receives issued before Initialize() (which binds the worker
// cache) are deferred until then. StartAbort fails local waiters and
// cancels every in-flight RPC. All methods are thread-safe.
//
// Push: a Send of a small tensor (at most kMaxPushBytes, fixed-size
// elements, or a dead one) for another task's device also pushes it to that
// task (PushTensor), unless that task's RecvTensor for it came first. The
// consumer keeps what is pushed (at most kMaxPushedBytesPerStep per step)
// and a remote receive that finds its tensor there completes without an
// RPC; one that does not asks with RecvTensor, which the producer answers
// from its own table as ever. A push is only an offer: refused, failed or
// late, it changes nothing but the receive's latency. A pushed key carries
// the producer's incarnation, so a restarted producer's push never matches
// a receive of the old one.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RENDEZVOUS_MGR_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RENDEZVOUS_MGR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/common_runtime/local_rendezvous.h"
#include "distflow/distributed_runtime/worker_cache.h"
#include "distflow/framework/rendezvous.h"

namespace distflow {

class RemoteRendezvous : public Rendezvous {
 public:
  // `task_name` is this worker's "/job:J/replica:R/task:T".
  RemoteRendezvous(std::string task_name, int64_t step_id);

  // Binds the cache used for remote receives and runs the deferred ones.
  // Later calls are ignored.
  void Initialize(std::shared_ptr<WorkerCache> worker_cache);

  // InvalidArgument when the key's source device is not in this task.
  absl::Status Send(const ParsedKey& key, const Args& args, const Tensor& value,
                    bool is_dead) override;
  void RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) override;
  void StartAbort(const absl::Status& status) override;
  // Local receivers of this task's devices, deferred receives and
  // RecvTensor calls in flight.
  std::vector<std::string> PendingReceives() const override;

  // Serves a peer's RecvTensor: waits for the local producer of `key`, or
  // until args.cancellation_manager (may be null) is cancelled. A Send of
  // `key` after this does not push it.
  void RecvLocalAsync(const ParsedKey& key, const Args& args, DoneCallback done);

  // Keeps a tensor a peer pushed for a receive of this task's device (see
  // Push above). ResourceExhausted when the step holds
  // kMaxPushedBytesPerStep of pushed tensors already; the status of the
  // abort once aborted. A second push of a key is ignored.
  absl::Status AcceptPush(const ParsedKey& key, const Tensor& value, bool is_dead);

  static constexpr uint64_t kMaxPushBytes = 64 << 10;
  static constexpr int64_t kMaxPushedBytesPerStep = 4 << 20;
  // How long a push may take before it is given up (the receive then asks).
  static constexpr int64_t kPushTimeoutMs = 10000;

  int64_t step_id() const { return step_id_; }

 private:
  ~RemoteRendezvous() override;
  bool IsLocal(const ParsedDeviceName& device) const;
  void RecvFromRemote(const ParsedKey& key, const Args& args, DoneCallback done);
  // Pushes a sent tensor to its remote consumer when it qualifies.
  void MaybePush(const ParsedKey& key, const Tensor& value, bool is_dead);

  struct Deferred {
    ParsedKey key;
    Args args;
    DoneCallback done;
  };

  const std::string task_name_;
  ParsedDeviceName task_;
  const int64_t step_id_;
  LocalRendezvous local_;

  // A RecvTensor in flight: its options (to cancel it) and its key.
  struct ActiveCall {
    std::shared_ptr<CallOptions> opts;
    std::string key;
  };

  mutable absl::Mutex mu_;
  std::shared_ptr<WorkerCache> worker_cache_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::vector<Deferred> deferred_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<CallOptions*, ActiveCall> active_calls_ ABSL_GUARDED_BY(mu_);
  // Tensors peers pushed, by full key, until a receive takes them.
  struct Pushed {
    Tensor value;
    bool is_dead = false;
  };
  absl::flat_hash_map<std::string, Pushed> pushed_ ABSL_GUARDED_BY(mu_);
  int64_t pushed_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Keys of this task's tensors a peer asked for with RecvTensor: not
  // pushed.
  absl::flat_hash_set<std::string> asked_ ABSL_GUARDED_BY(mu_);
};

class RendezvousMgr {
 public:
  explicit RendezvousMgr(std::string task_name);
  ~RendezvousMgr();

  static constexpr size_t kMaxUnclaimedSteps = 1024;
  static constexpr absl::Duration kUnclaimedStepLifetime = absl::Seconds(60);

  // The rendezvous of `step_id` for the step's own run (which claims it),
  // created when new. The caller owns the returned reference.
  RefPtr<RemoteRendezvous> Find(int64_t step_id);
  // The rendezvous of `step_id` for one receive served to a peer, created
  // (unclaimed) when new; the caller calls EndReceive(step_id) once the
  // receive is over. ResourceExhausted when kMaxUnclaimedSteps are there.
  absl::StatusOr<RefPtr<RemoteRendezvous>> FindForReceive(int64_t step_id);
  // A receive FindForReceive counted is over: an unclaimed step whose last
  // receive it was is dropped.
  void EndReceive(int64_t step_id);
  // The rendezvous of `step_id` to keep a tensor a peer pushed, created
  // (unclaimed, so it lapses like the others when no RunGraph comes) when
  // new. ResourceExhausted when half of kMaxUnclaimedSteps are there: the
  // rest stay for receives, which cannot do without.
  absl::StatusOr<RefPtr<RemoteRendezvous>> FindForPush(int64_t step_id);
  // Aborts and forgets the step's rendezvous (if any).
  void Cleanup(int64_t step_id);
  // Aborts and forgets every step.
  void CleanupAll();
  // How many steps' rendezvous it holds.
  size_t NumSteps() const;

 private:
  // A step no RunGraph has claimed yet.
  struct Unclaimed {
    absl::Time created;
    int receives = 0;  // FindForReceive calls not yet ended
  };
  // Removes the unclaimed steps older than kUnclaimedStepLifetime from the
  // tables and returns them, to be aborted outside the lock.
  std::vector<RefPtr<RemoteRendezvous>> TakeExpiredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string task_name_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int64_t, RefPtr<RemoteRendezvous>> table_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int64_t, Unclaimed> unclaimed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RENDEZVOUS_MGR_H_
