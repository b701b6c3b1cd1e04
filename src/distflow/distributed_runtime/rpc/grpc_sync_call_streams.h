// Call streams for a client that polls no completion queue of its own (a
// GrpcSession): a call borrows an idle stream of the pool (or opens one),
// writes its request and reads its reply on the calling thread — as a
// synchronous unary call polls its own call — and gives the stream back.
// One call at a time per stream, so no call waits behind another's bytes and
// no thread hands a reply to another. The messages are those of
// grpc_call_stream.h (a server serves them with StreamMethod), and a call
// keeps a unary call's semantics:
//   - its deadline (sent with it, so the server ends it too) ends it with
//     DEADLINE_EXCEEDED; cancelling the context the call reports through
//     `track` ends it with CANCELLED; either way that stream is dropped;
//   - the server's error comes back as the status the unary call would
//     have had (server-marked, see grpc_util.h); a broken stream as the
//     transport's status;
//   - a stream that broke while idle (the server stopped or restarted) is
//     found out by the next call's write, which then goes once on a new
//     stream: nothing reached the server on the broken one.
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_SYNC_CALL_STREAMS_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_SYNC_CALL_STREAMS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/timer.h"
#include "distflow/distributed_runtime/rpc/grpc_call_stream_frame.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "grpcpp/grpcpp.h"

namespace distflow {

template <class SReq, class SResp>
class SyncCallStreams {
 public:
  using Req = std::decay_t<decltype(std::declval<SReq>().request())>;
  using Resp = std::remove_pointer_t<decltype(std::declval<SResp>().mutable_response())>;
  // Opens a stream (a stub's X(ctx) for a bidi method X).
  using Opener =
      std::function<std::unique_ptr<grpc::ClientReaderWriter<SReq, SResp>>(grpc::ClientContext*)>;
  // Told of the context that carries a call: `running` true before the
  // call starts, false once it ended.
  using Track = std::function<void(grpc::ClientContext* ctx, bool running)>;

  // At most `max_idle` streams wait for calls; more are closed after use.
  explicit SyncCallStreams(Opener open, size_t max_idle = 4)
      : open_(std::move(open)), max_idle_(max_idle) {}
  ~SyncCallStreams() {
    std::vector<std::shared_ptr<Stream>> idle;
    {
      absl::MutexLock lock(&mu_);
      idle.swap(idle_);
    }
    for (auto& stream : idle) Close(stream.get());
  }
  SyncCallStreams(const SyncCallStreams&) = delete;
  SyncCallStreams& operator=(const SyncCallStreams&) = delete;

  // Runs one call: `*resp` gets its response when the status is OK.
  // `timeout_ms` 0: no deadline.
  grpc::Status Call(const Req& req, Resp* resp, int64_t timeout_ms, const Track& track) {
    std::shared_ptr<Stream> stream = TakeIdle();
    const bool reused = stream != nullptr;
    if (stream == nullptr) stream = Open();
    grpc::Status s = CallOn(stream, req, resp, timeout_ms, track);
    if (!s.ok() && reused && stream->unsent) {
      // The stream broke while idle: the request never left.
      stream = Open();
      s = CallOn(stream, req, resp, timeout_ms, track);
    }
    return s;
  }

 private:
  struct Stream {
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientReaderWriter<SReq, SResp>> rw;
    uint64_t next_id = 1;
    // The last call's write failed: its request did not leave.
    bool unsent = false;
  };

  std::shared_ptr<Stream> TakeIdle() {
    absl::MutexLock lock(&mu_);
    if (idle_.empty()) return nullptr;
    std::shared_ptr<Stream> stream = std::move(idle_.back());
    idle_.pop_back();
    return stream;
  }

  std::shared_ptr<Stream> Open() {
    auto stream = std::make_shared<Stream>();
    stream->ctx.set_wait_for_ready(false);
    stream->rw = open_(&stream->ctx);
    return stream;
  }

  static void Close(Stream* stream) {
    stream->ctx.TryCancel();
    stream->rw->Finish().ok();
  }

  // The call on `stream`; gives the stream back when it is still good.
  grpc::Status CallOn(const std::shared_ptr<Stream>& stream, const Req& req, Resp* resp,
                      int64_t timeout_ms, const Track& track) {
    SReq msg;
    const uint64_t id = stream->next_id++;
    msg.set_call_id(id);
    msg.set_timeout_ms(timeout_ms);
    // Borrowed, not copied: the write encodes it before it returns.
    msg.unsafe_arena_set_allocated_request(const_cast<Req*>(&req));
    if (track) track(&stream->ctx, true);
    Timer::Id timer = 0;
    std::shared_ptr<std::atomic<bool>> expired;  // set by the deadline's timer
    if (timeout_ms > 0) {
      expired = std::make_shared<std::atomic<bool>>(false);
      std::weak_ptr<Stream> weak = stream;
      timer = Timer::Default()->Schedule(absl::Milliseconds(timeout_ms), [weak, expired] {
        if (std::shared_ptr<Stream> s = weak.lock()) {
          expired->store(true);
          s->ctx.TryCancel();
        }
      });
    }
    const bool written = stream->rw->Write(msg);
    msg.unsafe_arena_release_request();
    SResp reply;
    const bool read = written && stream->rw->Read(&reply);
    if (timer != 0) Timer::Default()->Cancel(timer);
    if (track) track(&stream->ctx, false);
    stream->unsent = !written;
    if (!read) {
      grpc::Status end = stream->rw->Finish();
      if (expired != nullptr && expired->load())
        return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded");
      if (end.ok())
        end = grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server ended the call stream");
      return end;
    }
    if (reply.call_id() != id) {
      Close(stream.get());
      return grpc::Status(grpc::StatusCode::INTERNAL,
                          absl::StrCat("the call stream answered call ", reply.call_id(),
                                       " where call ", id, " was asked"));
    }
    if (expired != nullptr && expired->load()) {
      // The timer cancelled the stream after the reply came: drop it.
      Close(stream.get());
    } else {
      GiveBack(stream);
    }
    grpc::Status status = StreamReplyStatus(reply);
    if (status.ok()) {
      using std::swap;
      swap(*resp, *reply.mutable_response());
    }
    return status;
  }

  void GiveBack(const std::shared_ptr<Stream>& stream) {
    {
      absl::MutexLock lock(&mu_);
      if (idle_.size() < max_idle_) {
        idle_.push_back(stream);
        return;
      }
    }
    Close(stream.get());
  }

  const Opener open_;
  const size_t max_idle_;
  absl::Mutex mu_;
  std::vector<std::shared_ptr<Stream>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_SYNC_CALL_STREAMS_H_
