// Call streams: many unary calls of one method carried on one long-lived
// bidirectional gRPC stream, served and made on a ServerCallQueue
// (grpc_call_queue.h). A unary call costs a new HTTP/2 stream each time —
// headers both ways, the call's setup and teardown in gRPC's core — which on
// a small machine is most of a per-step call's round trip; a message on an
// open stream costs about two thirds of that (bench/grpc_stream_floor).
//
// Each message up is one call's request, or the cancel of a call still
// running, named by the caller's call id; each message down is one call's
// reply: its status (code, message, and whether it was derived from another
// task's failure) and, when OK, its response. The framing messages SReq and
// SResp are protos with the fields call_id, request, cancel and timeout_ms,
// and call_id, code, message, derived and response.
//
// What a unary call guarantees, a call on a stream keeps:
//   - the handler is the unary method's (same token check, same
//     CancellationManager), run on the polling thread;
//   - a call's deadline (timeout_ms, sent with it) cancels the call on both
//     ends; a caller's cancel ends it at once and tells the server, which
//     cancels the call's CancellationManager;
//   - a stream that breaks (the peer went away, restarted, or the queue is
//     shutting down) fails every call on it with the transport's status,
//     and the next call opens a new stream;
//   - the memory budget is charged for a request from its arrival and for a
//     reply from its answer until written, as for a unary call;
//   - the server's Stop sees each call on a stream as a call in flight, and
//     an idle stream as none.
// A server takes at most kMaxCallsPerStream calls at once on one stream and
// answers the ones beyond RESOURCE_EXHAUSTED, and a call id already running
// INVALID_ARGUMENT.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_STREAM_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_STREAM_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/memory_budget.h"
#include "distflow/core/timer.h"
#include "distflow/distributed_runtime/rpc/grpc_call_queue.h"
#include "distflow/distributed_runtime/rpc/grpc_call_stream_frame.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "distflow/distributed_runtime/worker_interface.h"
#include "grpcpp/grpcpp.h"

namespace distflow {

inline constexpr size_t kMaxCallsPerStream = 1024;

template <class SReq, class SResp>
struct StreamMethod final : ServerCallQueue::MethodBase {
  using Req = std::decay_t<decltype(std::declval<SReq>().request())>;
  using Resp = std::remove_pointer_t<decltype(std::declval<SResp>().mutable_response())>;
  using RequestFn =
      std::function<void(grpc::ServerContext*, grpc::ServerAsyncReaderWriter<SResp, SReq>*,
                         grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*)>;
  RequestFn request;
  ServerCallQueue::Handler<Req, Resp> handler;
  void Post(ServerCallQueue* owner) override;

  // Adds a stream method to `queue` (before it starts): each call on a
  // stream is handed to `handler`, the unary method's. `name`, the unary
  // method's, counts the calls in the queue's stats (as streamed).
  static void AddTo(ServerCallQueue* queue, RequestFn request,
                    ServerCallQueue::Handler<Req, Resp> handler, const std::string& name) {
    auto method = std::make_unique<StreamMethod>();
    method->stats = queue->stats_.Add(name);
    method->request = std::move(request);
    method->handler = std::move(handler);
    method->pending = 1;
    queue->AddMethod(std::move(method));
  }
};

// The server's end of one stream. It lives until the "call done" notice,
// its finish and every call on it have come back.
template <class SReq, class SResp>
class ServerCallStream final : public ServerCallQueue::Call {
 public:
  using Method = StreamMethod<SReq, SResp>;
  using TagKind = ServerCallQueue::TagKind;

  ServerCallStream(ServerCallQueue* owner, Method* method)
      : owner_(owner), method_(method), stream_(&ctx_) {
    ctx_.AsyncNotifyWhenDone(&tags_[ServerCallQueue::kDone]);
  }
  void Request() {
    grpc::ServerCompletionQueue* cq = owner_->cq();
    method_->request(&ctx_, &stream_, cq, cq, &tags_[ServerCallQueue::kRequest]);
  }

  void OnEvent(TagKind kind, bool ok) override {
    switch (kind) {
      case ServerCallQueue::kRequest:
        owner_->RequestAnswered(ok);
        if (!ok) {
          delete this;
          return;
        }
        // The stream is no call of its own: the calls on it are.
        owner_->CallEnded();
        method_->Post(owner_);
        Read();
        return;
      case ServerCallQueue::kRead:
        if (ok) {
          OnMessage();
        } else {
          EndReading();
        }
        return;
      case ServerCallQueue::kWrite:
        OnWritten(ok);
        return;
      case ServerCallQueue::kDone:
        if (ctx_.IsCancelled()) CancelAll();
        Unref(1);
        return;
      case ServerCallQueue::kFinish:
        Unref(1);
        return;
      default:
        return;
    }
  }

 private:
  struct Running {
    uint64_t id = 0;
    std::unique_ptr<SReq> msg;
    std::unique_ptr<SResp> reply = std::make_unique<SResp>();
    CancellationManager cm;
    absl::Time arrived;
    memory_budget::Reservation request_charge;
    Timer::Id timer = 0;
  };
  struct Outgoing {
    std::unique_ptr<SResp> reply;
    memory_budget::Reservation charge;
  };

  void Read() {
    reading_ = std::make_unique<SReq>();
    SReq* msg = reading_.get();
    if (owner_->RunIfRunning([&] { stream_.Read(msg, &tags_[ServerCallQueue::kRead]); })) return;
    EndReading();
  }

  // No message will come any more: the client is done, or the stream broke.
  void EndReading() {
    bool unref = false;
    {
      absl::MutexLock lock(&mu_);
      read_ended_ = true;
      unref = MaybeFinishLocked();
    }
    if (unref) Unref(1);
  }

  void OnMessage() {
    std::unique_ptr<SReq> msg = std::move(reading_);
    const uint64_t id = msg->call_id();
    if (msg->cancel()) {
      std::shared_ptr<Running> running;
      {
        absl::MutexLock lock(&mu_);
        auto it = running_.find(id);
        if (it != running_.end()) running = it->second;
      }
      Read();
      if (running != nullptr) running->cm.StartCancel();
      return;
    }
    auto r = std::make_shared<Running>();
    r->id = id;
    r->arrived = absl::Now();
    r->msg = std::move(msg);
    grpc::Status refused;
    refs_.fetch_add(1, std::memory_order_relaxed);
    owner_->CallStarted();
    {
      absl::MutexLock lock(&mu_);
      if (running_.contains(id)) {
        refused = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                               absl::StrCat("call ", id, " is already running on this stream"));
      } else if (running_.size() >= kMaxCallsPerStream) {
        refused = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                               absl::StrCat("this stream already runs ", kMaxCallsPerStream,
                                            " calls, the most one stream may"));
      } else {
        running_.emplace(id, r);
      }
    }
    if (refused.ok() && memory_budget::Limit() > 0) {
      auto charge = memory_budget::Reservation::Make(
          call_queue_internal::MessageBytes(*r->msg),
          "decoding a " + call_queue_internal::MessageName(r->msg->request()));
      if (charge.ok()) {
        r->request_charge = *std::move(charge);
      } else {
        refused = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                               std::string(charge.status().message()));
      }
    }
    // The next message is read while this one is handled.
    Read();
    if (!refused.ok()) {
      Reply(r, refused);
      return;
    }
    if (r->msg->timeout_ms() > 0) {
      std::weak_ptr<Running> weak = r;
      const Timer::Id timer =
          Timer::Default()->Schedule(absl::Milliseconds(r->msg->timeout_ms()), [weak] {
            if (std::shared_ptr<Running> expired = weak.lock()) expired->cm.StartCancel();
          });
      absl::MutexLock lock(&mu_);
      r->timer = timer;
    }
    method_->handler(&ctx_, &r->msg->request(), r->reply->mutable_response(), &r->cm,
                     [this, r](const grpc::Status& s) { Reply(r, s); });
  }

  // Queues call `r`'s reply with status `s`.
  void Reply(const std::shared_ptr<Running>& r, grpc::Status s) {
    Outgoing out;
    out.reply = std::move(r->reply);
    SResp* reply = out.reply.get();
    if (s.ok() && memory_budget::Limit() > 0) {
      auto charge = memory_budget::Reservation::Make(
          call_queue_internal::MessageBytes(*reply),
          "encoding a " + call_queue_internal::MessageName(reply->response()));
      if (charge.ok()) {
        out.charge = *std::move(charge);
      } else {
        s = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                         std::string(charge.status().message()));
      }
    }
    reply->set_call_id(r->id);
    SetStreamReplyStatus(s, reply);
    method_->stats->Record(absl::Now() - r->arrived, s.ok(), /*streamed=*/true);
    int ended = 0;
    int unrefs = 0;
    Timer::Id timer = 0;
    {
      absl::MutexLock lock(&mu_);
      timer = r->timer;
      r->timer = 0;
      auto it = running_.find(r->id);
      if (it != running_.end() && it->second == r) running_.erase(it);
      if (broken_) {
        ended = 1;
      } else {
        writes_.push_back(std::move(out));
        if (!writing_.has_value()) ended = WriteNextLocked();
      }
      unrefs = ended;
      if (MaybeFinishLocked()) ++unrefs;
    }
    if (timer != 0) Timer::Default()->Cancel(timer);
    r->msg.reset();
    r->request_charge = memory_budget::Reservation();
    for (int i = 0; i < ended; ++i) owner_->CallEnded();
    if (unrefs > 0) Unref(unrefs);
  }

  // Writes the next reply queued; the count of calls that ended unwritten
  // (the queue is stopping).
  int WriteNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writes_.empty()) return 0;
    writing_ = std::move(writes_.front());
    writes_.pop_front();
    const bool started = owner_->RunIfRunning(
        [&] { stream_.Write(*writing_->reply, &tags_[ServerCallQueue::kWrite]); });
    if (started) return 0;
    broken_ = true;
    writing_.reset();
    int dropped = 1 + static_cast<int>(writes_.size());
    writes_.clear();
    return dropped;
  }

  void OnWritten(bool ok) {
    int ended = 1;
    int unrefs = 1;
    {
      absl::MutexLock lock(&mu_);
      writing_.reset();
      if (!ok) {
        broken_ = true;
        ended += static_cast<int>(writes_.size());
        writes_.clear();
      } else {
        ended += WriteNextLocked();
      }
      unrefs = ended;
      if (MaybeFinishLocked()) ++unrefs;
    }
    if (!ok) CancelAll();
    for (int i = 0; i < ended; ++i) owner_->CallEnded();
    Unref(unrefs);
  }

  // Finishes the stream once reading has ended and every call on it has
  // been answered; true when the finish could not start (the queue is
  // stopping), so its reference is the caller's to drop.
  bool MaybeFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!read_ended_ || !running_.empty() || !writes_.empty() || writing_.has_value() ||
        finishing_) {
      return false;
    }
    finishing_ = true;
    return !owner_->RunIfRunning(
        [&] { stream_.Finish(grpc::Status::OK, &tags_[ServerCallQueue::kFinish]); });
  }

  void CancelAll() {
    std::vector<std::shared_ptr<Running>> running;
    {
      absl::MutexLock lock(&mu_);
      for (auto& [id, r] : running_) running.push_back(r);
    }
    for (auto& r : running) r->cm.StartCancel();
  }

  void Unref(int n) {
    if (refs_.fetch_sub(n, std::memory_order_acq_rel) == n) delete this;
  }

  ServerCallQueue* const owner_;
  Method* const method_;
  grpc::ServerContext ctx_;
  grpc::ServerAsyncReaderWriter<SResp, SReq> stream_;
  // The message being read (polling thread only).
  std::unique_ptr<SReq> reading_;
  absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, std::shared_ptr<Running>> running_ ABSL_GUARDED_BY(mu_);
  std::deque<Outgoing> writes_ ABSL_GUARDED_BY(mu_);
  std::optional<Outgoing> writing_ ABSL_GUARDED_BY(mu_);
  bool read_ended_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;
  // The done notice, the finish, and one per call taken and not yet ended.
  std::atomic<int> refs_{2};
  ServerCallQueue::Tag tags_[6] = {
      {this, ServerCallQueue::kRequest}, {this, ServerCallQueue::kFinish},
      {this, ServerCallQueue::kDone},    {this, ServerCallQueue::kRead},
      {this, ServerCallQueue::kWrite},   {this, ServerCallQueue::kStart}};
};

template <class SReq, class SResp>
void StreamMethod<SReq, SResp>::Post(ServerCallQueue* owner) {
  auto* stream = new ServerCallStream<SReq, SResp>(owner, this);
  if (!owner->PostIfRunning([stream] { stream->Request(); })) delete stream;
}

// The client's end of one stream, on a ServerCallQueue. Calls are taken
// until the stream breaks; then Call returns 0 and the caller opens a new
// one. Thread-safe.
template <class SReq, class SResp>
class ClientCallStream final : public ServerCallQueue::Call {
 public:
  using Req = typename StreamMethod<SReq, SResp>::Req;
  using Resp = typename StreamMethod<SReq, SResp>::Resp;
  using TagKind = ServerCallQueue::TagKind;
  using Opener = std::function<std::unique_ptr<grpc::ClientAsyncReaderWriter<SReq, SResp>>(
      grpc::ClientContext*, grpc::CompletionQueue*)>;
  using Done = std::function<void(const grpc::Status&)>;

  // Opens a stream with `open` (a stub's PrepareAsyncX); null when the
  // queue is not running.
  static std::shared_ptr<ClientCallStream> Open(ServerCallQueue* queue, const Opener& open) {
    std::shared_ptr<ClientCallStream> stream(new ClientCallStream(queue));
    ClientCallStream* s = stream.get();
    s->self_ = stream;
    s->ctx_.set_wait_for_ready(false);
    absl::MutexLock lock(&s->mu_);
    const bool opened = queue->AddClientCall(&s->ctx_, [&] {
      s->rw_ = open(&s->ctx_, queue->cq());
      s->rw_->StartCall(&s->tags_[ServerCallQueue::kStart]);
    });
    if (!opened) {
      s->broken_ = true;
      s->self_.reset();
      return nullptr;
    }
    s->ops_ = 1;
    return stream;
  }

  ~ClientCallStream() override {
    // Never deleted with borrowed requests inside.
    for (auto& out : writes_) out.Release();
  }

  // Sends a call: `*resp` gets its response, and `done` its status, once;
  // `req` and `resp` must live until then. A deadline of `timeout_ms` (0:
  // none) ends it with DEADLINE_EXCEEDED. Returns the call's id, or 0 when
  // the stream is broken or already carries kMaxCallsPerStream calls: the
  // call was not taken, and `done` will not run.
  uint64_t Call(const Req* req, Resp* resp, int64_t timeout_ms, Done done) {
    absl::MutexLock lock(&mu_);
    if (broken_ || calls_.size() >= kMaxCallsPerStream) return 0;
    const uint64_t id = next_id_++;
    Pending& p = calls_[id];
    p.resp = resp;
    p.done = std::move(done);
    Outgoing& out = writes_.emplace_back();
    out.id = id;
    out.msg.set_call_id(id);
    out.msg.set_timeout_ms(timeout_ms);
    // Borrowed, not copied: the write encodes it at once, and a call that
    // ends before its write drops it unsent.
    out.msg.unsafe_arena_set_allocated_request(const_cast<Req*>(req));
    out.borrowed = true;
    if (timeout_ms > 0) {
      std::weak_ptr<ClientCallStream> weak = self_;
      p.timer = Timer::Default()->Schedule(absl::Milliseconds(timeout_ms), [weak, id] {
        if (auto s = weak.lock()) {
          s->End(id, grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"));
        }
      });
    }
    if (started_ && !writing_) WriteNextLocked();
    return id;
  }

  // Ends call `id` with CANCELLED, when it is still running, and tells the
  // server to cancel it.
  void Cancel(uint64_t id) { End(id, grpc::Status(grpc::StatusCode::CANCELLED, "Cancelled")); }

  // Cancels the stream: calls still on it fail.
  void Close() { ctx_.TryCancel(); }

  bool broken() const {
    absl::MutexLock lock(&mu_);
    return broken_;
  }

  void OnEvent(TagKind kind, bool ok) override {
    std::vector<std::pair<Done, grpc::Status>> finished;
    std::shared_ptr<ClientCallStream> last;
    {
      absl::MutexLock lock(&mu_);
      --ops_;
      switch (kind) {
        case ServerCallQueue::kStart:
          if (ok) {
            started_ = true;
            ReadLocked(&finished);
            WriteNextLocked();
          } else {
            broken_ = true;
            FinishLocked(&finished);
          }
          break;
        case ServerCallQueue::kRead:
          if (ok) {
            TakeReplyLocked(&finished);
            ReadLocked(&finished);
          } else {
            broken_ = true;
            FinishLocked(&finished);
          }
          break;
        case ServerCallQueue::kWrite:
          writing_ = false;
          // A failed write: the read fails too, and finishes the stream.
          if (ok) {
            WriteNextLocked();
          } else {
            broken_ = true;
          }
          break;
        case ServerCallQueue::kFinish: {
          finished_ = true;
          FailAllLocked(status_.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                                    "the server ended the call stream")
                                     : status_,
                        &finished);
          break;
        }
        default:
          break;
      }
      if (finished_ && ops_ == 0) last = std::move(self_);
    }
    if (last != nullptr) owner_->RemoveClientCall(&ctx_);
    for (auto& [done, status] : finished) done(status);
    // `last` may hold the stream's last reference: it goes here.
  }

 private:
  explicit ClientCallStream(ServerCallQueue* owner) : owner_(owner) {}

  struct Pending {
    Resp* resp = nullptr;
    Done done;
    Timer::Id timer = 0;
    bool sent = false;
  };
  struct Outgoing {
    uint64_t id = 0;
    SReq msg;
    bool borrowed = false;
    void Release() {
      if (borrowed) msg.unsafe_arena_release_request();
      borrowed = false;
    }
  };

  void End(uint64_t id, const grpc::Status& status) {
    Pending p;
    {
      absl::MutexLock lock(&mu_);
      auto it = calls_.find(id);
      if (it == calls_.end()) return;
      p = std::move(it->second);
      calls_.erase(it);
      // A call not yet written is dropped from the queue when its turn
      // comes; one written is cancelled on the server.
      if (p.sent && !broken_) {
        Outgoing& out = writes_.emplace_back();
        out.id = id;
        out.msg.set_call_id(id);
        out.msg.set_cancel(true);
        if (started_ && !writing_) WriteNextLocked();
      }
    }
    if (p.timer != 0) Timer::Default()->Cancel(p.timer);
    p.done(status);
  }

  void ReadLocked(std::vector<std::pair<Done, grpc::Status>>* finished)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    reading_.Clear();
    if (owner_->RunIfRunning([&] { rw_->Read(&reading_, &tags_[ServerCallQueue::kRead]); })) {
      ++ops_;
      return;
    }
    broken_ = true;
    finished_ = true;
    FailAllLocked(StoppingStatus(), finished);
  }

  void WriteNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (!writing_ && !writes_.empty() && !broken_) {
      Outgoing out = std::move(writes_.front());
      writes_.pop_front();
      if (!out.msg.cancel()) {
        auto it = calls_.find(out.id);
        if (it == calls_.end()) {  // ended before its turn
          out.Release();
          continue;
        }
        it->second.sent = true;
      }
      // The write encodes the message before it returns.
      const bool started =
          owner_->RunIfRunning([&] { rw_->Write(out.msg, &tags_[ServerCallQueue::kWrite]); });
      out.Release();
      if (!started) {
        broken_ = true;
        return;
      }
      writing_ = true;
      ++ops_;
    }
  }

  void TakeReplyLocked(std::vector<std::pair<Done, grpc::Status>>* finished)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = calls_.find(reading_.call_id());
    if (it == calls_.end()) return;  // ended already (cancelled, timed out)
    Pending p = std::move(it->second);
    calls_.erase(it);
    if (p.timer != 0) Timer::Default()->Cancel(p.timer);
    grpc::Status status = StreamReplyStatus(reading_);
    if (status.ok()) {
      using std::swap;
      swap(*p.resp, *reading_.mutable_response());
    }
    finished->emplace_back(std::move(p.done), std::move(status));
  }

  // Asks for the stream's status (once no read is out); its calls fail with
  // it.
  void FinishLocked(std::vector<std::pair<Done, grpc::Status>>* finished)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (owner_->RunIfRunning([&] { rw_->Finish(&status_, &tags_[ServerCallQueue::kFinish]); })) {
      ++ops_;
      return;
    }
    finished_ = true;
    FailAllLocked(StoppingStatus(), finished);
  }

  static grpc::Status StoppingStatus() {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "this server is not running");
  }

  void FailAllLocked(const grpc::Status& status,
                     std::vector<std::pair<Done, grpc::Status>>* finished)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (auto& [id, p] : calls_) {
      if (p.timer != 0) Timer::Default()->Cancel(p.timer);
      finished->emplace_back(std::move(p.done), status);
    }
    calls_.clear();
  }

  ServerCallQueue* const owner_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientAsyncReaderWriter<SReq, SResp>> rw_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, Pending> calls_ ABSL_GUARDED_BY(mu_);
  std::deque<Outgoing> writes_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // Operations out on the queue.
  int ops_ ABSL_GUARDED_BY(mu_) = 0;
  SResp reading_ ABSL_GUARDED_BY(mu_);
  grpc::Status status_;
  // Held while the gRPC call lives: its tags point here.
  std::shared_ptr<ClientCallStream> self_ ABSL_GUARDED_BY(mu_);
  ServerCallQueue::Tag tags_[6] = {
      {this, ServerCallQueue::kRequest}, {this, ServerCallQueue::kFinish},
      {this, ServerCallQueue::kDone},    {this, ServerCallQueue::kRead},
      {this, ServerCallQueue::kWrite},   {this, ServerCallQueue::kStart}};
};

// The open stream of one method to one peer, opened with the first call
// and anew, once, for a call that finds it broken. Thread-safe.
template <class SReq, class SResp>
class ClientCallStreamSlot {
 public:
  using Stream = ClientCallStream<SReq, SResp>;
  using Req = typename Stream::Req;
  using Resp = typename Stream::Resp;

  // `queue` may be null (then no call goes on a stream).
  ClientCallStreamSlot(ServerCallQueue* queue, typename Stream::Opener open)
      : queue_(queue), open_(std::move(open)) {}
  ~ClientCallStreamSlot() {
    absl::MutexLock lock(&mu_);
    if (stream_ != nullptr) stream_->Close();
  }

  // Sends a call on the stream (Stream::Call), under `opts`' deadline and
  // cancellation (may be null). False when no stream took it (the queue is
  // not running, or the stream is full): the caller makes it another way,
  // and `done` will not run.
  bool Call(const Req* req, Resp* resp, CallOptions* opts, typename Stream::Done done) {
    if (queue_ == nullptr) return false;
    const int64_t timeout_ms = opts == nullptr ? 0 : opts->timeout_ms();
    for (bool reopen : {false, true}) {
      std::shared_ptr<Stream> stream = Current(reopen);
      if (stream == nullptr) return false;
      const uint64_t id = stream->Call(req, resp, timeout_ms, done);
      if (id == 0) {
        if (!stream->broken()) return false;  // full
        continue;
      }
      if (opts != nullptr && !opts->SetCancelCallback([stream, id] { stream->Cancel(id); })) {
        stream->Cancel(id);
      }
      return true;
    }
    return false;
  }

 private:
  std::shared_ptr<Stream> Current(bool reopen) {
    absl::MutexLock lock(&mu_);
    if (stream_ == nullptr || (reopen && stream_->broken())) {
      stream_ = Stream::Open(queue_, open_);
    }
    return stream_;
  }

  ServerCallQueue* const queue_;
  const typename Stream::Opener open_;
  absl::Mutex mu_;
  std::shared_ptr<Stream> stream_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_STREAM_H_
