// The receiver's end of the tensor side channel (wire format in
// side_channel_wire.h): fetches the payload a producer holds under a ticket
// straight into the caller's buffer, with no copy in between. Connections
// are pooled per producer endpoint: one fetch at a time per connection, a
// new one when every pooled one is busy, at most `max_idle_per_peer` kept
// idle. A pooled connection the producer has closed meanwhile is replaced
// once, transparently.
//
// Every wait is bounded: by the caller's deadline, by `stall_timeout`
// without a byte arriving, and by `connect_timeout` for a connection.
// StartCancel on the call's options shuts the connection down, so a blocked
// read returns at once. Errors name the producer's task: Unavailable (cannot
// connect, connection closed mid-transfer, producer stalled),
// DeadlineExceeded, Cancelled, DataLoss (a reply that breaks the protocol),
// or the producer's own refusal (NotFound for an unknown ticket).
//
// FetchAsync runs fetches on a few threads of the client's own (at most
// `fetch_threads`, started as needed), so that a read of many megabytes
// holds no gRPC thread and the work in flight has a bound: at most
// `max_waiting_fetches` wait for a thread, each at most `max_wait_to_start`
// (and never past its deadline). Shutdown (or the destructor) fails the
// waiting ones, cuts the running ones short and joins the threads.
//
// TryRecvAsync asks a producer for a tensor by its rendezvous key (a keyed
// receive, side_channel_wire.h). On a pooled connection the request leaves
// from the calling thread and one thread of the client's own waits for
// every such reply at once (core/readable_watcher.h); it reads a reply
// that is in whole and runs `done` there, and hands a longer read to the
// pool. Without a pooled connection a pool thread connects, asks and
// waits; it starts only when a thread is free for it at once: never queued
// behind another, so receives that wait on each other's producers cannot
// starve a pool. At most `max_keyed` keyed receives run at once (each
// holds a connection at its producer); otherwise the caller asks over gRPC.
// Threads that keyed receives hold do not count against `fetch_threads`,
// so a fetch never waits behind a keyed receive.
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_CLIENT_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/core/readable_watcher.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "distflow/distributed_runtime/worker_interface.h"
#include "distflow/framework/tensor.h"

namespace distflow {

class SideChannelClient {
 public:
  struct Options {
    // A keyed receive takes an idle connection to its producer, or makes
    // one; a step that asks one producer for all its variables at once
    // keeps as many busy.
    int max_idle_per_peer = 16;
    absl::Duration connect_timeout = absl::Seconds(10);
    absl::Duration stall_timeout = absl::Seconds(30);
    int fetch_threads = 4;
    int max_waiting_fetches = 256;
    absl::Duration max_wait_to_start = absl::Seconds(30);
    // Keyed receives at once. A waiting one holds a connection and a
    // sleeping thread at its producer, and nothing here; its reply is
    // written by the producer's thread that made the tensor and read by the
    // client's one watcher thread (docs/performance.md, "Keyed replies
    // from the producing thread", measures 16 against one per core). One
    // that must connect first holds a pool thread meanwhile.
    int max_keyed = 16;
  };

  explicit SideChannelClient(Options options);
  SideChannelClient() : SideChannelClient(Options()) {}
  // Shutdown.
  ~SideChannelClient();
  SideChannelClient(const SideChannelClient&) = delete;
  SideChannelClient& operator=(const SideChannelClient&) = delete;

  // Fetches the `bytes`-byte payload held under `ticket` by the producer
  // listening at host:port into dst[0, bytes). `task` names the producer in
  // errors. `opts` (may be null) can cancel the fetch; it must not carry
  // another cancel callback meanwhile. On error dst holds garbage.
  absl::Status Fetch(const std::string& host, int port, const SideChannelTicket& ticket, void* dst,
                     uint64_t bytes, absl::Time deadline, CallOptions* opts,
                     const std::string& task);

  // Fetch's arguments.
  struct FetchArgs {
    std::string host;
    int port = 0;
    SideChannelTicket ticket{};
    void* dst = nullptr;
    uint64_t bytes = 0;
    absl::Time deadline = absl::InfiniteFuture();
    CallOptions* opts = nullptr;
    std::string task;
  };
  using FetchDone = std::function<void(const absl::Status&)>;
  // Fetch on one of the client's threads; `done` runs exactly once: there
  // with Fetch's status, or, when the fetch never starts, with
  // ResourceExhausted (max_waiting_fetches wait already) or Cancelled
  // (shut down, or args.opts cancelled) on the calling thread or the
  // canceller's, or with DeadlineExceeded (no thread came by the deadline
  // or within max_wait_to_start) on the process timer's thread. Each
  // names args.task. args.dst and args.opts must stay valid until `done`.
  void FetchAsync(FetchArgs args, FetchDone done);

  // A keyed receive's arguments. `token` goes in the connection's hello;
  // the tensor and its deadness land in *tensor and *is_dead.
  struct KeyedArgs {
    std::string host;
    int port = 0;
    int64_t step_id = 0;
    std::string key;
    std::string token;
    absl::Time deadline = absl::InfiniteFuture();
    CallOptions* opts = nullptr;
    std::string task;
    Tensor* tensor = nullptr;
    bool* is_dead = nullptr;
  };
  // `sent` is false when the request reached no producer (nothing could
  // connect, or the producer closed the connection before any byte of a
  // reply: its slots were full, or it is stopping): asking over gRPC is
  // then safe.
  using KeyedDone = std::function<void(const absl::Status&, bool sent)>;
  // Starts a keyed receive when a thread is free for it (`done` then runs
  // exactly once, on that thread or, at shutdown, the caller's); false,
  // with nothing started, when none is. args.opts, args.tensor and
  // args.is_dead must stay valid until `done`.
  bool TryRecvAsync(KeyedArgs args, KeyedDone done);

  // Fails the fetches waiting for a thread and cuts those running short
  // (both Cancelled), joins the client's threads; later fetches fail at
  // once. Idempotent. May run in a fetch's `done`.
  void Shutdown();

  // The port this process's own side channel listens on: hellos name it,
  // so producers learn where to push this process tensors
  // (side_channel_pusher.h). 0 (the default): none.
  void SetOwnPort(int port) { own_port_.store(port, std::memory_order_relaxed); }

  // Idle connections to host:port, for tests.
  int IdleConnections(const std::string& host, int port);
  // Keyed receives whose reply the watcher waited for, for tests.
  int64_t keyed_watched() const { return keyed_watched_.load(std::memory_order_relaxed); }

 private:
  class Connection;
  struct Attempt;
  struct Waiting;
  struct Pool;

  // A fetcher thread: runs waiting fetches until the pool stops.
  static void FetchLoop(const std::shared_ptr<Pool>& pool, SideChannelClient* client);
  // Settles `w` with `status` unless a thread took it or it was settled.
  static void FailWaiting(const std::shared_ptr<Pool>& pool, const std::shared_ptr<Waiting>& w,
                          const absl::Status& status);

  // A pooled idle connection that is still open, or a new one.
  absl::StatusOr<std::shared_ptr<Connection>> Take(const std::string& host, int port,
                                                   absl::Time deadline, const std::string& task,
                                                   bool* reused);
  void GiveBack(const std::string& endpoint, std::shared_ptr<Connection> c);
  Attempt Transfer(Connection* c, const SideChannelTicket& ticket, void* dst, uint64_t bytes,
                   absl::Time deadline, const std::string& task);
  using Watched = ReadableWatcher::Event;
  // Sends a keyed request on a pooled idle connection at once, without
  // waiting, and leaves the reply to the watcher. False, with nothing
  // asked, when there is no such connection or the request did not go
  // whole.
  bool WatchKeyed(const std::shared_ptr<const KeyedArgs>& a,
                  const std::shared_ptr<KeyedDone>& done);
  // The watched reply's `event`. Reads the reply where it is unless that
  // could wait and `may_wait` is false: then a pool thread does.
  void OnKeyedReply(const std::shared_ptr<const KeyedArgs>& a, const std::shared_ptr<Connection>& c,
                    Watched event, const std::shared_ptr<KeyedDone>& done, bool may_wait);
  // Watches `c` again, to run `on_readable` once `low_water` bytes are in.
  // Ends the receive at its deadline (DeadlineExceeded), past the stall
  // bound once the reply has `begun` (Unavailable, naming `what` and
  // `moved` of `total` bytes), and at shutdown (Cancelled). False when the
  // watcher took nothing (it is stopping).
  bool WatchAgain(const std::shared_ptr<const KeyedArgs>& a, const std::shared_ptr<Connection>& c,
                  const std::shared_ptr<KeyedDone>& done, uint64_t low_water, bool begun,
                  const char* what, uint64_t moved, uint64_t total,
                  std::function<void()> on_readable);
  // Reads the `follows` bytes of a.tensor after a watched reply from byte
  // `got` on, as far as they are in, and watches for the rest.
  void ReadFollowsAsTheyCome(const std::shared_ptr<const KeyedArgs>& a,
                             const std::shared_ptr<Connection>& c,
                             const std::shared_ptr<KeyedDone>& done, uint64_t follows,
                             uint64_t got);
  // Ends a watched keyed receive with `r` (a stale pooled connection asks
  // again from a pool thread) and runs `done`.
  void FinishKeyed(const std::shared_ptr<const KeyedArgs>& a, const std::shared_ptr<Connection>& c,
                   Attempt r, const std::shared_ptr<KeyedDone>& done);
  // A keyed receive on the calling thread: connects, asks and waits.
  // Tries from `first_attempt` (1: a pooled connection was found stale).
  absl::Status Keyed(const KeyedArgs& a, int first_attempt, bool* sent);
  // A keyed receive ended (its slot of `max_keyed` is free).
  void KeyedFinished();
  // Wakes an idle pool thread for queued work, or starts one while there
  // are fewer than fetch_threads + max_keyed; false when neither.
  bool ThreadForWorkLocked();  // pool_->mu held
  // Runs `job` on a pool thread: one free now, a new one, or the next to
  // come free; at shutdown on the calling thread.
  void RunOnPool(std::function<void()> job);
  // The request's bytes: a hello first on a connection that has had none.
  std::string KeyedRequest(const Connection& c, const KeyedArgs& a) const;
  Attempt SendKeyedRequest(Connection* c, const KeyedArgs& a);
  // Reads a keyed reply into a.tensor; `follows` is the count of the
  // tensor's bytes that come after it (0: none).
  Attempt ReadKeyedReply(Connection* c, const KeyedArgs& a, uint64_t* follows);
  Attempt ReadFollowingBytes(Connection* c, const KeyedArgs& a, uint64_t bytes);
  // An idle pooled connection to host:port that is still open, or null.
  std::shared_ptr<Connection> TakeIdle(const std::string& endpoint);
  // Takes `c` for one request: cancellable through `opts` and by Shutdown.
  // Cancelled when either happened already.
  absl::Status Begin(const std::shared_ptr<Connection>& c, uint64_t generation, CallOptions* opts,
                     const std::string& task);
  void End(const std::shared_ptr<Connection>& c, CallOptions* opts);

  const Options options_;
  std::atomic<int> own_port_{0};
  std::atomic<int64_t> keyed_watched_{0};
  const std::shared_ptr<Pool> pool_;
  // Waits for the replies of keyed receives.
  ReadableWatcher watcher_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::vector<std::shared_ptr<Connection>>> idle_
      ABSL_GUARDED_BY(mu_);
  // Connections a fetch is using, with the fetch's generation (Shutdown
  // cuts them).
  absl::flat_hash_map<std::shared_ptr<Connection>, uint64_t> busy_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_CLIENT_H_
