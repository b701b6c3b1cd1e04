#include "distflow/distributed_runtime/rpc/side_channel_client.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <deque>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "distflow/core/errno_text.h"
#include "distflow/core/memory_budget.h"
#include "distflow/core/status.h"
#include "distflow/core/timer.h"
#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"

namespace distflow {

// One TCP connection to a producer. The descriptor stays open as long as
// the object lives, so a late cancel can never shut down a reused number;
// the generation makes a cancel meant for an earlier fetch a no-op.
class SideChannelClient::Connection {
 public:
  explicit Connection(int fd) : fd_(fd) {}
  ~Connection() { close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd() const { return fd_; }

  uint64_t generation() {
    absl::MutexLock lock(&mu_);
    return generation_;
  }
  // Shuts the socket down iff `generation` is still the current fetch's.
  void Cancel(uint64_t generation) {
    absl::MutexLock lock(&mu_);
    if (generation != generation_ || cancelled_) return;
    cancelled_ = true;
    shutdown(fd_, SHUT_RDWR);
  }
  // Ends the current fetch; true iff it was cancelled.
  bool EndFetch() {
    absl::MutexLock lock(&mu_);
    ++generation_;
    return cancelled_;
  }
  // True iff the connection looks usable: nothing to read and no hang-up
  // (an idle connection the producer closed reads as end of file).
  bool LooksOpen() const {
    pollfd pfd{fd_, POLLIN, 0};
    return poll(&pfd, 1, 0) == 0;
  }
  // Whether this connection's hello went out (one request at a time uses
  // a connection, so no lock).
  bool greeted() const { return greeted_; }
  void set_greeted() { greeted_ = true; }
  // Asks the kernel to call the connection readable only once `bytes` are
  // in (or the receive window is nearly full, or it closed), so a large
  // tensor wakes its reader a few times rather than once per segment. 1
  // is the default; a pooled connection always goes back with it.
  void SetReadLowWater(int bytes) {
    if (bytes == low_water_) return;
    if (distflow::SetReadLowWater(fd_, bytes)) low_water_ = bytes;
  }

 private:
  const int fd_;
  absl::Mutex mu_;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool greeted_ = false;
  int low_water_ = 1;
};

// How one try of a fetch went. `stale`: the connection was found closed
// before the producer answered anything, so a fresh one may try again.
struct SideChannelClient::Attempt {
  absl::Status status;
  bool stale = false;
};

namespace {

std::string Endpoint(const std::string& host, int port) {
  return absl::StrCat(host.find(':') != std::string::npos ? absl::StrCat("[", host, "]") : host,
                      ":", port);
}

// The status of a read or write that did not finish, naming the task and
// how far it got.
absl::Status IoFailure(IoOutcome outcome, int error, absl::string_view what, size_t moved,
                       uint64_t total, absl::Duration stall, const std::string& task) {
  const std::string progress = absl::StrCat(" (", moved, " of ", total, " bytes)");
  switch (outcome) {
    case IoOutcome::kDeadline:
      return errors::DeadlineExceeded(
          "RecvTensor from ", task, " timed out on the tensor side channel while ", what, progress);
    case IoOutcome::kStalled:
      return errors::Unavailable("tensor side channel from ", task, " stalled: nothing moved for ",
                                 absl::FormatDuration(stall), " while ", what, progress);
    case IoOutcome::kClosed:
      return errors::Unavailable("tensor side channel from ", task, " closed while ", what,
                                 progress, error != 0 ? ": " : "",
                                 error != 0 ? ErrnoText(error) : "", " (did the task exit?)");
    default:
      return errors::Unavailable("tensor side channel from ", task, " failed while ", what,
                                 progress, ": ", ErrnoText(error));
  }
}

// The status of work the client refused or cut short because it is shut
// down, naming the producer's task.
absl::Status ShutDown(const std::string& task) {
  return errors::Cancelled("RecvTensor from ", task,
                           " was cancelled: the tensor side channel client is shut down");
}

// Whether a keyed request's token and key are within the wire's bounds.
bool FitsTheWire(const SideChannelClient::KeyedArgs& a) {
  return a.token.size() <= kSideChannelMaxToken && !a.key.empty() &&
         a.key.size() <= kSideChannelMaxKey;
}

// The longest keyed reply taken: gRPC's own bound on a message.
constexpr uint64_t kMaxKeyedReplyBytes = uint64_t{2} << 30;

// The most bytes a reader waits to be in before it is woken.
constexpr uint64_t kMaxReadLowWater = uint64_t{1} << 20;

// Buffers this large come from fresh mappings (malloc maps anything over
// 32 MiB), so every page of them faults when the payload first lands; with
// 4 KiB pages that costs as much as the copy itself. Asking for huge pages
// on the buffer's aligned interior makes it one fault per 2 MiB. Advice
// only: where huge pages are off or scarce nothing changes.
constexpr uint64_t kHugePageMinBytes = uint64_t{32} << 20;
constexpr uintptr_t kHugePageBytes = uintptr_t{2} << 20;

void AdviseHugePages(void* dst, uint64_t bytes) {
  if (bytes < kHugePageMinBytes) return;
  const uintptr_t begin =
      (reinterpret_cast<uintptr_t>(dst) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(dst) + bytes) & ~(kHugePageBytes - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace

// A fetch waiting for a thread. `settled` once a thread took it or it
// failed: exactly one of them runs `done`.
struct SideChannelClient::Waiting {
  FetchArgs args;
  FetchDone done;
  // A keyed receive: run in place of a fetch (`done` then only fails it).
  std::function<void()> job;
  // Under the pool's mutex from here on.
  Timer::Id timer = 0;
  bool queued = false;
  bool settled = false;
};

// The fetcher threads and their queue. Shared with the threads and the
// timer's callbacks, so that none touches a destroyed client.
struct SideChannelClient::Pool {
  absl::Mutex mu;
  absl::CondVar work;
  std::deque<std::shared_ptr<Waiting>> queue ABSL_GUARDED_BY(mu);  // settled ones are skipped
  int waiting ABSL_GUARDED_BY(mu) = 0;                             // not settled in `queue`
  int idle ABSL_GUARDED_BY(mu) = 0;
  int keyed ABSL_GUARDED_BY(mu) = 0;  // keyed receives started, not done
  bool stopping ABSL_GUARDED_BY(mu) = false;
  std::vector<std::thread> threads ABSL_GUARDED_BY(mu);
};

SideChannelClient::SideChannelClient(Options options)
    : options_(options), pool_(std::make_shared<Pool>()) {}

SideChannelClient::~SideChannelClient() { Shutdown(); }

void SideChannelClient::FetchAsync(FetchArgs args, FetchDone done) {
  auto w = std::make_shared<Waiting>();
  const std::string task = args.task;
  const absl::Time start_by = std::min(args.deadline, absl::Now() + options_.max_wait_to_start);
  CallOptions* opts = args.opts;
  w->args = std::move(args);
  w->done = std::move(done);
  // A cancelled fetch fails at once, and one not started in time fails at
  // its time; both are no-ops once a thread has taken it. The cancel
  // callback is set before any thread can take the fetch (which then sets
  // its own).
  std::weak_ptr<Pool> weak = pool_;
  if (opts != nullptr && !opts->SetCancelCallback([weak, w, task] {
        if (std::shared_ptr<Pool> pool = weak.lock()) {
          FailWaiting(pool, w, errors::Cancelled("RecvTensor from ", task, " was cancelled"));
        }
      })) {
    FetchDone d = std::move(w->done);
    d(errors::Cancelled("RecvTensor from ", task, " was cancelled"));
    return;
  }
  absl::Status refused;
  {
    absl::MutexLock lock(&pool_->mu);
    if (w->settled) return;  // cancelled meanwhile
    if (pool_->stopping) {
      refused = ShutDown(task);
    } else if (pool_->waiting >= options_.max_waiting_fetches) {
      refused = errors::ResourceExhausted(
          "RecvTensor from ", task, ": ", pool_->waiting,
          " tensor side channel fetches wait for a thread already, the most that may");
    }
    if (refused.ok()) {
      pool_->queue.push_back(w);
      w->queued = true;
      ++pool_->waiting;
      // Threads that keyed receives hold (waiting for producers that may
      // wait for this fetch) do not count against the fetchers.
      if (pool_->idle == 0 &&
          static_cast<int>(pool_->threads.size()) < options_.fetch_threads + pool_->keyed) {
        pool_->threads.emplace_back([pool = pool_, this] { FetchLoop(pool, this); });
      } else {
        pool_->work.Signal();
      }
    }
  }
  if (!refused.ok()) {
    if (opts != nullptr) opts->ClearCancelCallback();
    FailWaiting(pool_, w, refused);
    return;
  }
  Timer::Id timer = Timer::Default()->Schedule(
      std::max(absl::ZeroDuration(), start_by - absl::Now()), [weak, w, task] {
        if (std::shared_ptr<Pool> pool = weak.lock()) {
          FailWaiting(
              pool, w,
              errors::DeadlineExceeded("RecvTensor from ", task,
                                       ": no tensor side channel fetcher was free in time"));
        }
      });
  {
    absl::MutexLock lock(&pool_->mu);
    if (!w->settled) {
      w->timer = timer;
      timer = 0;
    }
  }
  if (timer != 0) Timer::Default()->Cancel(timer);
}

void SideChannelClient::FailWaiting(const std::shared_ptr<Pool>& pool,
                                    const std::shared_ptr<Waiting>& w, const absl::Status& status) {
  FetchDone done;
  Timer::Id timer = 0;
  {
    absl::MutexLock lock(&pool->mu);
    if (w->settled) return;
    w->settled = true;
    if (w->queued) --pool->waiting;
    done = std::move(w->done);
    timer = w->timer;
  }
  if (timer != 0) Timer::Default()->Cancel(timer);
  done(status);
}

void SideChannelClient::FetchLoop(const std::shared_ptr<Pool>& pool, SideChannelClient* client) {
  for (;;) {
    std::shared_ptr<Waiting> w;
    Timer::Id timer = 0;
    {
      absl::MutexLock lock(&pool->mu);
      ++pool->idle;
      while (!pool->stopping && pool->waiting == 0) pool->work.Wait(&pool->mu);
      --pool->idle;
      if (pool->stopping) return;
      while (pool->queue.front()->settled) pool->queue.pop_front();
      w = std::move(pool->queue.front());
      pool->queue.pop_front();
      w->settled = true;
      --pool->waiting;
      timer = w->timer;
    }
    if (timer != 0) Timer::Default()->Cancel(timer);
    if (w->job != nullptr) {
      std::function<void()> job = std::move(w->job);
      w.reset();
      job();
      continue;
    }
    // The fetch sets its own cancel callback in place of the waiting one.
    if (w->args.opts != nullptr) w->args.opts->ClearCancelCallback();
    const FetchArgs& a = w->args;
    const absl::Status s =
        client->Fetch(a.host, a.port, a.ticket, a.dst, a.bytes, a.deadline, a.opts, a.task);
    FetchDone done = std::move(w->done);
    w.reset();
    done(s);
  }
}

void SideChannelClient::Shutdown() {
  std::vector<std::thread> threads;
  std::deque<std::shared_ptr<Waiting>> queue;
  {
    absl::MutexLock lock(&pool_->mu);
    pool_->stopping = true;
    threads.swap(pool_->threads);
    queue.swap(pool_->queue);
    pool_->work.SignalAll();
  }
  {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
    for (auto& [c, generation] : busy_) c->Cancel(generation);
  }
  // Replies still watched end Cancelled here; their connections are cut.
  watcher_.Stop();
  for (const std::shared_ptr<Waiting>& w : queue) {
    FailWaiting(pool_, w, ShutDown(w->args.task));
  }
  for (std::thread& t : threads) {
    // A fetch's `done` that shuts the client down ends its own thread:
    // that thread touches only the pool from here on.
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();
    } else {
      t.join();
    }
  }
}

absl::Status SideChannelClient::Fetch(const std::string& host, int port,
                                      const SideChannelTicket& ticket, void* dst, uint64_t bytes,
                                      absl::Time deadline, CallOptions* opts,
                                      const std::string& task) {
  AdviseHugePages(dst, bytes);
  for (int attempt = 0;; ++attempt) {
    if (absl::Now() >= deadline) {
      return errors::DeadlineExceeded("RecvTensor from ", task,
                                      " timed out before its tensor side channel was read");
    }
    bool reused = false;
    DF_ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Take(host, port, deadline, task, &reused));
    DF_RETURN_IF_ERROR(Begin(c, c->generation(), opts, task));
    Attempt a = Transfer(c.get(), ticket, dst, bytes, deadline, task);
    End(c, opts);
    if (c->EndFetch()) return errors::Cancelled("RecvTensor from ", task, " was cancelled");
    if (a.status.ok()) {
      GiveBack(Endpoint(host, port), std::move(c));
      return absl::OkStatus();
    }
    if (!(a.stale && reused && attempt == 0)) return a.status;
  }
}

absl::Status SideChannelClient::Begin(const std::shared_ptr<Connection>& c, uint64_t generation,
                                      CallOptions* opts, const std::string& task) {
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) {
      return ShutDown(task);
    }
    busy_[c] = generation;
  }
  if (opts != nullptr && !opts->SetCancelCallback([c, generation] { c->Cancel(generation); })) {
    absl::MutexLock lock(&mu_);
    busy_.erase(c);
    return errors::Cancelled("RecvTensor from ", task, " was cancelled");
  }
  return absl::OkStatus();
}

void SideChannelClient::End(const std::shared_ptr<Connection>& c, CallOptions* opts) {
  if (opts != nullptr) opts->ClearCancelCallback();
  absl::MutexLock lock(&mu_);
  busy_.erase(c);
}

void SideChannelClient::KeyedFinished() {
  absl::MutexLock lock(&pool_->mu);
  --pool_->keyed;
}

bool SideChannelClient::TryRecvAsync(KeyedArgs args, KeyedDone done) {
  {
    absl::MutexLock lock(&pool_->mu);
    if (pool_->stopping || pool_->keyed >= options_.max_keyed) return false;
    ++pool_->keyed;
  }
  auto a = std::make_shared<const KeyedArgs>(std::move(args));
  auto shared_done = std::make_shared<KeyedDone>(std::move(done));
  if (WatchKeyed(a, shared_done)) return true;
  // No pooled connection to send on at once: a thread connects, asks and
  // waits. It starts only when a thread is free for it at once, never
  // queued behind a fetch or another keyed receive, so receives that wait
  // on each other's producers cannot starve the pool.
  auto w = std::make_shared<Waiting>();
  w->job = [this, a, shared_done] {
    bool sent = false;
    const absl::Status s = Keyed(*a, 0, &sent);
    KeyedFinished();
    (*shared_done)(s, sent);
  };
  w->done = [this, shared_done](const absl::Status& s) {
    KeyedFinished();
    (*shared_done)(s, true);
  };
  {
    absl::MutexLock lock(&pool_->mu);
    if (pool_->stopping || !ThreadForWorkLocked()) {
      --pool_->keyed;
      return false;
    }
    pool_->queue.push_back(std::move(w));
    pool_->queue.back()->queued = true;
    ++pool_->waiting;
  }
  return true;
}

bool SideChannelClient::ThreadForWorkLocked() {
  if (pool_->idle > pool_->waiting) {
    pool_->work.Signal();
    return true;
  }
  if (static_cast<int>(pool_->threads.size()) < options_.fetch_threads + options_.max_keyed) {
    pool_->threads.emplace_back([pool = pool_, this] { FetchLoop(pool, this); });
    return true;
  }
  return false;
}

void SideChannelClient::RunOnPool(std::function<void()> job) {
  auto w = std::make_shared<Waiting>();
  w->job = job;
  // At shutdown the job runs where the pool is failed: its connection is
  // cut by then, so it ends at once.
  w->done = [job = std::move(job)](const absl::Status&) { job(); };
  {
    absl::MutexLock lock(&pool_->mu);
    if (!pool_->stopping) {
      // With no thread free or startable, the next free thread takes it:
      // what it reads is on its way already, so it waits for no other
      // receive.
      ThreadForWorkLocked();
      pool_->queue.push_back(w);
      w->queued = true;
      ++pool_->waiting;
      return;
    }
  }
  w->job();
}

std::shared_ptr<SideChannelClient::Connection> SideChannelClient::TakeIdle(
    const std::string& endpoint) {
  absl::MutexLock lock(&mu_);
  auto it = idle_.find(endpoint);
  while (it != idle_.end() && !it->second.empty()) {
    std::shared_ptr<Connection> c = std::move(it->second.back());
    it->second.pop_back();
    if (c->LooksOpen()) return c;
  }
  return nullptr;
}

bool SideChannelClient::WatchKeyed(const std::shared_ptr<const KeyedArgs>& a,
                                   const std::shared_ptr<KeyedDone>& done) {
  if (!FitsTheWire(*a)) return false;  // the thread path says what is wrong
  const std::string endpoint = Endpoint(a->host, a->port);
  std::shared_ptr<Connection> c = TakeIdle(endpoint);
  if (c == nullptr) return false;
  if (!Begin(c, c->generation(), a->opts, a->task).ok()) {
    GiveBack(endpoint, std::move(c));
    return false;  // cancelled already: the thread path says so
  }
  const std::string request = KeyedRequest(*c, *a);
  // One try, never waiting. A request that did not go whole leaves the
  // connection unusable, and the producer drops the part it read: the
  // thread path asks again on a fresh one.
  const ssize_t n = send(c->fd(), request.data(), request.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n != static_cast<ssize_t>(request.size())) {
    End(c, a->opts);
    c->EndFetch();
    return false;
  }
  c->set_greeted();
  keyed_watched_.fetch_add(1, std::memory_order_relaxed);
  const bool watched = watcher_.Watch(c->fd(), a->deadline, [this, a, c, done](Watched e) {
    OnKeyedReply(a, c, e, done, /*may_wait=*/false);
  });
  // Asked, and not watched (the client is stopping): a thread waits.
  if (!watched) {
    RunOnPool([this, a, c, done] { OnKeyedReply(a, c, Watched::kReadable, done, true); });
  }
  return true;
}

namespace {

// Bytes the kernel holds to be read on `fd` (0 when it cannot say).
uint64_t Readable(int fd) {
  int n = 0;
  return ioctl(fd, FIONREAD, &n) == 0 && n > 0 ? static_cast<uint64_t>(n) : 0;
}

// What a watched keyed reply still waits for: `bytes`, the size of the
// whole reply (its header and what the header announces; the header
// alone while that is not in), 0 when it is all in or a read would fail at
// once; `partial` when some of it is in.
struct ReplyWait {
  uint64_t bytes = 0;
  bool partial = false;
};
ReplyWait WhatTheReplyWaitsFor(int fd) {
  std::array<char, kSideChannelReplyHeaderBytes> head;
  const ssize_t n = recv(fd, head.data(), head.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return {};  // end of file
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return {};
    return {head.size(), false};
  }
  if (static_cast<size_t>(n) < head.size()) return {head.size(), true};
  SideChannelReplyHeader header;
  if (!DecodeSideChannelReplyHeader(head, &header)) return {};  // DataLoss at once
  const uint64_t body =
      header.code != absl::StatusCode::kOk ? header.message_bytes : header.payload_bytes;
  const uint64_t whole = head.size() + body;
  if (whole < body || Readable(fd) >= whole) return {};  // DataLoss at once, or in
  return {whole, true};
}

}  // namespace

void SideChannelClient::OnKeyedReply(const std::shared_ptr<const KeyedArgs>& a,
                                     const std::shared_ptr<Connection>& c, Watched event,
                                     const std::shared_ptr<KeyedDone>& done, bool may_wait) {
  switch (event) {
    case Watched::kStopped:
      FinishKeyed(a, c, {ShutDown(a->task)}, done);
      return;
    case Watched::kDeadline:
      FinishKeyed(a, c,
                  {errors::DeadlineExceeded("RecvTensor from ", a->task,
                                            " timed out on the tensor side channel while waiting "
                                            "for a keyed reply")},
                  done);
      return;
    case Watched::kReadable:
      break;
  }
  // On the watcher's thread only what is in already is read. A reply not
  // all in is watched again, to wake once it is (SO_RCVLOWAT), by the
  // deadline and, once it has begun, the stall bound; one longer than the
  // low-water bound is read on a thread of the pool.
  if (!may_wait) {
    const ReplyWait wait = WhatTheReplyWaitsFor(c->fd());
    if (wait.bytes > 0) {
      if (wait.bytes > kMaxReadLowWater ||
          !WatchAgain(a, c, done, wait.bytes, wait.partial, "reading a keyed reply", 0, wait.bytes,
                      [this, a, c, done] {
                        OnKeyedReply(a, c, Watched::kReadable, done, /*may_wait=*/false);
                      })) {
        RunOnPool([this, a, c, done] { OnKeyedReply(a, c, Watched::kReadable, done, true); });
      }
      return;
    }
  }
  uint64_t follows = 0;
  Attempt r = ReadKeyedReply(c.get(), *a, &follows);
  if (r.status.ok() && follows > 0) {
    if (!may_wait) {
      AdviseHugePages(a->tensor->raw_data(), follows);
      ReadFollowsAsTheyCome(a, c, done, follows, 0);
      return;
    }
    r = ReadFollowingBytes(c.get(), *a, follows);
  }
  FinishKeyed(a, c, std::move(r), done);
}

bool SideChannelClient::WatchAgain(const std::shared_ptr<const KeyedArgs>& a,
                                   const std::shared_ptr<Connection>& c,
                                   const std::shared_ptr<KeyedDone>& done, uint64_t low_water,
                                   bool begun, const char* what, uint64_t moved, uint64_t total,
                                   std::function<void()> on_readable) {
  c->SetReadLowWater(static_cast<int>(low_water));
  const absl::Time stalled_at =
      begun ? absl::Now() + options_.stall_timeout : absl::InfiniteFuture();
  return watcher_.Watch(
      c->fd(), std::min(a->deadline, stalled_at),
      [this, a, c, done, stalled_at, what, moved, total,
       on_readable = std::move(on_readable)](Watched e) {
        switch (e) {
          case Watched::kReadable:
            on_readable();
            return;
          case Watched::kDeadline:
            *a->tensor = Tensor();
            FinishKeyed(
                a, c,
                {IoFailure(stalled_at < a->deadline ? IoOutcome::kStalled : IoOutcome::kDeadline, 0,
                           what, moved, total, options_.stall_timeout, a->task)},
                done);
            return;
          case Watched::kStopped:
            *a->tensor = Tensor();
            FinishKeyed(a, c, {ShutDown(a->task)}, done);
            return;
        }
      });
}

void SideChannelClient::ReadFollowsAsTheyCome(const std::shared_ptr<const KeyedArgs>& a,
                                              const std::shared_ptr<Connection>& c,
                                              const std::shared_ptr<KeyedDone>& done,
                                              uint64_t follows, uint64_t got) {
  char* dst = static_cast<char*>(a->tensor->raw_data());
  IoOutcome failed = IoOutcome::kDone;
  int error = 0;
  while (got < follows) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(follows - got, SSIZE_MAX));
    const ssize_t n = recv(c->fd(), dst + got, want, MSG_DONTWAIT);
    if (n > 0) {
      got += static_cast<uint64_t>(n);
    } else if (n == 0) {
      failed = IoOutcome::kClosed;
      break;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      break;
    } else if (errno != EINTR) {
      error = errno;
      failed = error == ECONNRESET || error == EPIPE ? IoOutcome::kClosed : IoOutcome::kError;
      break;
    }
  }
  const absl::Duration stall = options_.stall_timeout;
  auto fail = [&](IoOutcome o) {
    *a->tensor = Tensor();
    FinishKeyed(a, c, {IoFailure(o, error, "reading the tensor", got, follows, stall, a->task)},
                done);
  };
  if (failed != IoOutcome::kDone) return fail(failed);
  if (got == follows) {
    CanonicalizeBools(a->tensor);
    FinishKeyed(a, c, {}, done);
    return;
  }
  // The rest as it comes: by the call's deadline, and never a stall longer
  // than the stall bound.
  const bool watched = WatchAgain(
      a, c, done, std::min<uint64_t>(follows - got, kMaxReadLowWater), /*begun=*/true,
      "reading the tensor", got, follows,
      [this, a, c, done, follows, got] { ReadFollowsAsTheyCome(a, c, done, follows, got); });
  if (!watched) fail(IoOutcome::kClosed);  // the client is stopping
}

void SideChannelClient::FinishKeyed(const std::shared_ptr<const KeyedArgs>& a,
                                    const std::shared_ptr<Connection>& c, Attempt r,
                                    const std::shared_ptr<KeyedDone>& done) {
  End(c, a->opts);
  c->SetReadLowWater(1);
  absl::Status s;
  if (c->EndFetch()) {
    s = errors::Cancelled("RecvTensor from ", a->task, " was cancelled");
  } else if (r.status.ok()) {
    GiveBack(Endpoint(a->host, a->port), c);
  } else if (r.stale) {
    // The pooled connection was closed before any byte of a reply: the
    // producer read no request. A thread asks again on a fresh one.
    RunOnPool([this, a, done] {
      bool sent = false;
      const absl::Status s = Keyed(*a, 1, &sent);
      KeyedFinished();
      (*done)(s, sent);
    });
    return;
  } else {
    s = std::move(r.status);
  }
  KeyedFinished();
  (*done)(s, true);
}

absl::Status SideChannelClient::Keyed(const KeyedArgs& a, int first_attempt, bool* sent) {
  *sent = false;
  for (int attempt = first_attempt;; ++attempt) {
    if (absl::Now() >= a.deadline) {
      *sent = true;  // too late for gRPC as well
      return errors::DeadlineExceeded("RecvTensor from ", a.task, " timed out");
    }
    bool reused = false;
    DF_ASSIGN_OR_RETURN(std::shared_ptr<Connection> c,
                        Take(a.host, a.port, a.deadline, a.task, &reused));
    *sent = true;
    DF_RETURN_IF_ERROR(Begin(c, c->generation(), a.opts, a.task));
    Attempt r = SendKeyedRequest(c.get(), a);
    uint64_t follows = 0;
    if (r.status.ok()) r = ReadKeyedReply(c.get(), a, &follows);
    if (r.status.ok() && follows > 0) r = ReadFollowingBytes(c.get(), a, follows);
    End(c, a.opts);
    if (c->EndFetch()) return errors::Cancelled("RecvTensor from ", a.task, " was cancelled");
    if (r.status.ok()) {
      GiveBack(Endpoint(a.host, a.port), std::move(c));
      return absl::OkStatus();
    }
    if (!r.stale) return r.status;
    // Closed before any byte of a reply: the producer read no request
    // (its slots were full, or it closed that pooled connection), or it is
    // stopping. A pooled connection's first try asks again on a fresh one;
    // otherwise gRPC asks.
    *sent = false;
    if (!(reused && attempt == 0)) return r.status;
  }
}

std::string SideChannelClient::KeyedRequest(const Connection& c, const KeyedArgs& a) const {
  std::string request;
  std::array<char, kSideChannelRequestBytes> head;
  if (!c.greeted()) {
    EncodeSideChannelHello(static_cast<uint32_t>(a.token.size()),
                           own_port_.load(std::memory_order_relaxed), &head);
    request.append(head.data(), head.size());
    request += a.token;
  }
  // The producer ends its wait at the deadline too, in whole milliseconds.
  uint32_t timeout_ms = 0;
  if (a.deadline != absl::InfiniteFuture()) {
    const int64_t ms = absl::ToInt64Milliseconds(a.deadline - absl::Now());
    timeout_ms = static_cast<uint32_t>(std::clamp<int64_t>(ms, 1, UINT32_MAX));
  }
  EncodeSideChannelKeyed(a.step_id, static_cast<uint32_t>(a.key.size()), timeout_ms, &head);
  request.append(head.data(), head.size());
  request += a.key;
  return request;
}

SideChannelClient::Attempt SideChannelClient::SendKeyedRequest(Connection* c, const KeyedArgs& a) {
  if (!FitsTheWire(a)) {
    return {errors::InvalidArgument("RecvTensor from ", a.task,
                                    ": the token or rendezvous key is too long for the tensor "
                                    "side channel")};
  }
  const std::string request = KeyedRequest(*c, a);
  size_t moved = 0;
  int error = 0;
  const IoOutcome o = WriteFully(c->fd(), request.data(), request.size(), a.deadline,
                                 options_.stall_timeout, &moved, &error);
  if (o != IoOutcome::kDone) {
    return {IoFailure(o, error, "sending a keyed request", moved, request.size(),
                      options_.stall_timeout, a.task),
            o == IoOutcome::kClosed};
  }
  c->set_greeted();
  return {};
}

SideChannelClient::Attempt SideChannelClient::ReadKeyedReply(Connection* c, const KeyedArgs& a,
                                                             uint64_t* follows) {
  *follows = 0;
  const absl::Duration stall = options_.stall_timeout;
  size_t moved = 0;
  int error = 0;
  // The producer answers when the tensor is there: no stall bound, the
  // deadline only.
  std::array<char, kSideChannelReplyHeaderBytes> reply_head;
  IoOutcome o = ReadFully(c->fd(), reply_head.data(), reply_head.size(), a.deadline,
                          absl::InfiniteDuration(), &moved, &error);
  if (o != IoOutcome::kDone) {
    return {
        IoFailure(o, error, "waiting for a keyed reply", moved, reply_head.size(), stall, a.task),
        o == IoOutcome::kClosed && moved == 0};
  }
  SideChannelReplyHeader header;
  if (!DecodeSideChannelReplyHeader(reply_head, &header) || header.ticket != SideChannelTicket{}) {
    return {errors::DataLoss("malformed keyed reply on the tensor side channel from ", a.task)};
  }
  if (header.code != absl::StatusCode::kOk) {
    std::string message(header.message_bytes, '\0');
    if (ReadFully(c->fd(), message.data(), message.size(), a.deadline, stall, &moved, &error) !=
        IoOutcome::kDone) {
      message = "(no message)";
    }
    return {absl::Status(header.code, absl::StrCat(a.task, ": ", message))};
  }
  // Checked: the length comes off the wire.
  if (header.payload_bytes == 0 || header.payload_bytes > kMaxKeyedReplyBytes) {
    return {errors::DataLoss("keyed reply of ", header.payload_bytes,
                             " bytes on the tensor side channel from ", a.task)};
  }
  auto charge = memory_budget::Reservation::Make(
      static_cast<int64_t>(header.payload_bytes),
      absl::StrCat("a keyed reply from ", a.task, " on the tensor side channel"));
  if (!charge.ok()) return {charge.status()};
  grpc::Slice slice(static_cast<size_t>(header.payload_bytes));
  o = ReadFully(c->fd(), const_cast<uint8_t*>(slice.begin()), slice.size(), a.deadline, stall,
                &moved, &error);
  if (o != IoOutcome::kDone) {
    return {IoFailure(o, error, "reading a keyed reply", moved, slice.size(), stall, a.task)};
  }
  int64_t send_start = 0;
  std::optional<SideChannelOffer> offer;
  absl::Status decoded = DecodeRecvTensorResponse(grpc::ByteBuffer(&slice, 1), a.tensor, a.is_dead,
                                                  &send_start, &offer);
  if (!decoded.ok())
    return {errors::Annotate(decoded, absl::StrCat("keyed reply from ", a.task, ": "))};
  if (!offer.has_value()) return {};
  if (!offer->follows) {
    return {errors::DataLoss("a keyed reply on the tensor side channel from ", a.task,
                             " offered a ticket")};
  }
  *follows = offer->payload_bytes;
  return {};
}

SideChannelClient::Attempt SideChannelClient::ReadFollowingBytes(Connection* c, const KeyedArgs& a,
                                                                 uint64_t bytes) {
  // The tensor's bytes come after its reply, straight into its buffer.
  AdviseHugePages(a.tensor->raw_data(), bytes);
  size_t moved = 0;
  int error = 0;
  const IoOutcome o =
      ReadFullyWokenLate(c->fd(), a.tensor->raw_data(), bytes, a.deadline, options_.stall_timeout,
                         static_cast<int>(kMaxReadLowWater), &moved, &error);
  if (o != IoOutcome::kDone) {
    *a.tensor = Tensor();
    return {
        IoFailure(o, error, "reading the tensor", moved, bytes, options_.stall_timeout, a.task)};
  }
  CanonicalizeBools(a.tensor);
  return {};
}

SideChannelClient::Attempt SideChannelClient::Transfer(Connection* c,
                                                       const SideChannelTicket& ticket, void* dst,
                                                       uint64_t bytes, absl::Time deadline,
                                                       const std::string& task) {
  const absl::Duration stall = options_.stall_timeout;
  size_t moved = 0;
  int error = 0;
  std::array<char, kSideChannelRequestBytes> request;
  EncodeSideChannelRequest(ticket, &request);
  IoOutcome o =
      WriteFully(c->fd(), request.data(), request.size(), deadline, stall, &moved, &error);
  if (o != IoOutcome::kDone) {
    return {IoFailure(o, error, "sending the ticket", moved, request.size(), stall, task),
            o == IoOutcome::kClosed};
  }
  std::array<char, kSideChannelReplyHeaderBytes> head;
  o = ReadFully(c->fd(), head.data(), head.size(), deadline, stall, &moved, &error);
  if (o != IoOutcome::kDone) {
    return {IoFailure(o, error, "reading the reply header", moved, head.size(), stall, task),
            o == IoOutcome::kClosed && moved == 0};
  }
  SideChannelReplyHeader header;
  if (!DecodeSideChannelReplyHeader(head, &header) || header.ticket != ticket) {
    return {errors::DataLoss("malformed tensor side channel reply from ", task)};
  }
  if (header.code != absl::StatusCode::kOk) {
    std::string message(header.message_bytes, '\0');
    if (ReadFully(c->fd(), message.data(), message.size(), deadline, stall, &moved, &error) !=
        IoOutcome::kDone) {
      message = "(no message)";
    }
    return {absl::Status(header.code,
                         absl::StrCat(task, " refused a tensor side channel fetch: ", message))};
  }
  if (header.payload_bytes != bytes) {
    return {errors::DataLoss("tensor side channel from ", task, " announced ", header.payload_bytes,
                             " bytes where the RecvTensor reply said ", bytes)};
  }
  o = ReadFullyWokenLate(c->fd(), dst, bytes, deadline, stall, static_cast<int>(kMaxReadLowWater),
                         &moved, &error);
  if (o != IoOutcome::kDone) {
    return {IoFailure(o, error, "reading the tensor", moved, bytes, stall, task)};
  }
  return {absl::OkStatus()};
}

absl::StatusOr<std::shared_ptr<SideChannelClient::Connection>> SideChannelClient::Take(
    const std::string& host, int port, absl::Time deadline, const std::string& task, bool* reused) {
  const std::string endpoint = Endpoint(host, port);
  if (std::shared_ptr<Connection> c = TakeIdle(endpoint)) {
    *reused = true;
    return c;
  }
  std::string why;
  const int fd =
      ConnectTcp(host, port, std::min(deadline, absl::Now() + options_.connect_timeout), &why);
  if (fd < 0) {
    return errors::Unavailable("cannot connect to the tensor side channel of ", task, " at ",
                               endpoint, ": ", why);
  }
  *reused = false;
  return std::make_shared<Connection>(fd);
}

void SideChannelClient::GiveBack(const std::string& endpoint, std::shared_ptr<Connection> c) {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Connection>>& idle = idle_[endpoint];
  if (static_cast<int>(idle.size()) < options_.max_idle_per_peer) idle.push_back(std::move(c));
}

int SideChannelClient::IdleConnections(const std::string& host, int port) {
  absl::MutexLock lock(&mu_);
  auto it = idle_.find(Endpoint(host, port));
  return it == idle_.end() ? 0 : static_cast<int>(it->second.size());
}

}  // namespace distflow
