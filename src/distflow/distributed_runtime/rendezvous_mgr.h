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
// worker.
//
// Pushes. With a TensorPusher set, a value sent to another task that no
// receive of that task waits for yet is also offered to the pusher, which
// may send it to the receiving task at once (side_channel_pusher.h). A
// task that accepts pushes keeps what comes (DeliverPushed) for the step's
// receive: a receive that finds its value pushed asks nobody, and one that
// is asking takes the pushed value if it comes before the reply (the reply
// is then dropped). A push is only ever a head start: whatever was not
// pushed, or was dropped (over kMaxPushedBytes held, over
// kMaxUnclaimedSteps), is asked for as before, and the producer keeps every
// value for that until the step's Cleanup. Remote receives issued before Initialize() (which binds
// the worker cache) are deferred until then. StartAbort fails local waiters and cancels every
// in-flight RPC. All methods are thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RENDEZVOUS_MGR_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RENDEZVOUS_MGR_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
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

// Sends a small value a step produced to the task that will receive it,
// before that task asks (side_channel_pusher.h).
class TensorPusher {
 public:
  virtual ~TensorPusher() = default;
  // True when the value went to `task` ("/job:J/replica:R/task:T", the
  // receiving device's); false when nothing went. Never blocks.
  virtual bool TryPush(const std::string& task, int64_t step_id, absl::string_view key,
                       const Tensor& value, bool is_dead) = 0;
};

// What a worker does with pushes, shared by its steps' rendezvous.
struct PushSetup {
  std::shared_ptr<TensorPusher> pusher;  // null: this task pushes nothing
  bool accept = false;                   // whether peers push to this task
  // Bytes of pushed values held and not yet received, of every step.
  std::shared_ptr<std::atomic<int64_t>> held = std::make_shared<std::atomic<int64_t>>(0);
};

class RemoteRendezvous : public Rendezvous {
 public:
  // `task_name` is this worker's "/job:J/replica:R/task:T".
  RemoteRendezvous(std::string task_name, int64_t step_id, PushSetup push = PushSetup());

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
  // until args.cancellation_manager (may be null) is cancelled.
  void RecvLocalAsync(const ParsedKey& key, const Args& args, DoneCallback done);

  int64_t step_id() const { return step_id_; }

  // Keeps a value pushed for `key` (a full rendezvous key) for its receive,
  // or hands it to that receive if it is asking. True when kept: its
  // `bytes` then count in the setup's `held` until the receive takes it or
  // the step ends. False, with nothing kept, when handed over, when a value
  // is already kept for the key, when the step is aborted, or when this
  // task accepts no pushes.
  bool DeliverPushed(const std::string& key, const Tensor& value, bool is_dead, int64_t bytes);

 private:
  ~RemoteRendezvous() override;
  bool IsLocal(const ParsedDeviceName& device) const;
  void RecvFromRemote(const ParsedKey& key, const Args& args, DoneCallback done);

  // A receive that is asking, and may be answered by a push first: the
  // first of the two runs `done`.
  struct Race {
    std::atomic<bool> settled{false};
    Args args;
    CancellationToken token = 0;  // of the ask's callback on args' manager
    DoneCallback done;
    bool Settle() { return !settled.exchange(true); }
  };
  struct Pushed {
    Tensor value;
    bool is_dead = false;
    int64_t bytes = 0;
  };
  std::optional<Pushed> TakePushedLocked(absl::string_view key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands a pushed value to its receive.
  void ReceivePushed(absl::string_view src_device, const Pushed& pushed, const Args& args,
                     const DoneCallback& done);

  struct Deferred {
    ParsedKey key;
    Args args;
    DoneCallback done;
  };

  const std::string task_name_;
  ParsedDeviceName task_;
  const int64_t step_id_;
  const PushSetup push_;
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
  absl::flat_hash_map<std::string, Pushed> pushed_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<Race>> asking_ ABSL_GUARDED_BY(mu_);
};

class RendezvousMgr {
 public:
  explicit RendezvousMgr(std::string task_name);
  ~RendezvousMgr();

  static constexpr size_t kMaxUnclaimedSteps = 1024;
  static constexpr absl::Duration kUnclaimedStepLifetime = absl::Seconds(60);
  // The most bytes of pushed values held for receives at once.
  static constexpr int64_t kMaxPushedBytes = int64_t{64} << 20;

  // How this worker's steps push and take pushes; set before the first
  // step (steps made earlier keep the setup they were made with).
  void SetPush(PushSetup push) ABSL_LOCKS_EXCLUDED(mu_);
  // A value a peer pushed for `key` of step `step_id`: kept for the step's
  // receive (the step is made, unclaimed, when new), or dropped — over
  // kMaxPushedBytes held, kMaxUnclaimedSteps, or when pushes are not
  // accepted, or for a step cleaned up lately. True when kept (its bytes
  // held until received).
  bool DeliverPushed(int64_t step_id, const std::string& key, const Tensor& value, bool is_dead)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Bytes of pushed values held now.
  int64_t PushedBytesHeld() const ABSL_LOCKS_EXCLUDED(mu_);

  // The rendezvous of `step_id` for the step's own run (which claims it),
  // created when new. The caller owns the returned reference.
  RefPtr<RemoteRendezvous> Find(int64_t step_id);
  // The rendezvous of `step_id` for one receive served to a peer, created
  // (unclaimed) when new; the caller calls EndReceive(step_id) once the
  // receive is over. ResourceExhausted when kMaxUnclaimedSteps are there,
  // Cancelled when the step was cleaned up lately.
  absl::StatusOr<RefPtr<RemoteRendezvous>> FindForReceive(int64_t step_id);
  // A receive FindForReceive counted is over: an unclaimed step whose last
  // receive it was is dropped.
  void EndReceive(int64_t step_id);
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
  // Makes step_id's rendezvous, unclaimed, with `receives` receives counted
  // (after moving the expired steps to *expired); ResourceExhausted when
  // kMaxUnclaimedSteps are there.
  absl::StatusOr<RefPtr<RemoteRendezvous>> MakeUnclaimedLocked(
      int64_t step_id, int receives, std::vector<RefPtr<RemoteRendezvous>>* expired)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Aborts steps TakeExpiredLocked took, outside the lock.
  static void AbortExpired(const std::vector<RefPtr<RemoteRendezvous>>& expired);

  const std::string task_name_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<int64_t, RefPtr<RemoteRendezvous>> table_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int64_t, Unclaimed> unclaimed_ ABSL_GUARDED_BY(mu_);
  PushSetup push_ ABSL_GUARDED_BY(mu_);
  // The last kRememberedCleanups steps cleaned up: a receive for one of
  // them (a request that a push overtook) is refused at once, and a push
  // for one is dropped; neither makes the step anew.
  static constexpr size_t kRememberedCleanups = 4096;
  absl::flat_hash_set<int64_t> cleaned_ ABSL_GUARDED_BY(mu_);
  std::deque<int64_t> cleaned_order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RENDEZVOUS_MGR_H_
