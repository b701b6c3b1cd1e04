// The completion queue of a server process: the server's unary methods are
// served on it and the process's calls to other tasks complete on it, all
// polled by one thread, instead of through gRPC's callback API. gRPC's
// pollers are process-wide (one thread at a time polls every socket), so
// each extra polling thread — the callback API keeps two of its own — turns
// an arriving message into a wake-up of another thread: on a small virtual
// machine each costs tens of microseconds of a round trip. With one poller a
// request is read, handled and answered, and a reply is read and its
// callback run, on the thread that polled it.
//
// Handlers get the call's CancellationManager, cancelled when the client
// cancels, its deadline passes or it goes away, and a `done` to call exactly
// once with the call's status (from any thread). Handlers and client
// callbacks run on the polling thread, so they must never wait for another
// call: that call's completion needs this thread. Methods that may wait are
// added with a pool to run on.
//
// With a memory budget (core/memory_budget.h), a call holds the bytes of
// its decoded request from its arrival, and those of its response from the
// handler's `done` (gRPC encodes a copy), until it ends: a request or
// response that does not fit is answered RESOURCE_EXHAUSTED naming the
// message, the bytes and the budget, and the process goes on.
//
// Order of use: construct with the ServerBuilder before BuildAndStart, Add
// the methods, Start once the server runs; after the server's Shutdown has
// returned, and once nothing will make more calls, Shutdown cancels the
// calls to other tasks still out, shuts the queue and joins its thread.
// Destroy the server before the queue.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_QUEUE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_QUEUE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/memory_budget.h"
#include "distflow/core/threadpool.h"
#include "distflow/distributed_runtime/rpc/rpc_stats.h"
#include "distflow/framework/cancellation.h"
#include "google/protobuf/message_lite.h"
#include "grpcpp/grpcpp.h"

namespace distflow {

class ServerCallQueue {
 public:
  using Done = std::function<void(const grpc::Status&)>;
  // Asks the server for the method's next call (the generated RequestX).
  template <class Req, class Resp>
  using RequestFn =
      std::function<void(grpc::ServerContext*, Req*, grpc::ServerAsyncResponseWriter<Resp>*,
                         grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*)>;
  template <class Req, class Resp>
  using Handler =
      std::function<void(grpc::ServerContext*, const Req*, Resp*, CancellationManager*, Done)>;

  explicit ServerCallQueue(grpc::ServerBuilder* builder);
  ~ServerCallQueue();
  ServerCallQueue(const ServerCallQueue&) = delete;
  ServerCallQueue& operator=(const ServerCallQueue&) = delete;

  // Before Start. `pending` calls of the method wait on the queue. With a
  // `pool`, the handler runs there instead of on the polling thread.
  // `name` names the method in stats(); empty: the request type's name
  // less "Request" (RunStepRequest: "RunStep").
  template <class Req, class Resp>
  void Add(RequestFn<Req, Resp> request, Handler<Req, Resp> handler, int pending = 4,
           ThreadPool* pool = nullptr, std::string name = "");

  // The calls each method has answered, and how fast.
  const RpcStats& stats() const { return stats_; }

  void Start();
  // True iff, by `deadline`, every request the queue posted for a call has
  // been answered and every call that came has ended. Once the server's
  // Shutdown has begun, which fails the requests still waiting for a call,
  // that means no call of the queue is in flight and none will come: the
  // connections left carry nothing. Before that it stays false (a request
  // waits for each method). REQUIRES: Start, with at least one method added.
  bool WaitUntilNoCalls(absl::Time deadline);
  // Idempotent. Stops posting requests, cancels client calls still out,
  // shuts the queue and joins its thread.
  void Shutdown();

  // A unary call to another task, completing on the queue: `prepare`
  // makes it (a stub's PrepareAsyncX, or a GenericStub's
  // PrepareUnaryCall), `done` runs on the polling thread with its status.
  // `ctx` and `resp` must live until then. After Shutdown, `done` runs at
  // once with Unavailable.
  template <class Resp>
  using Prepare = std::function<std::unique_ptr<grpc::ClientAsyncResponseReader<Resp>>(
      grpc::ClientContext*, grpc::CompletionQueue*)>;
  template <class Resp>
  void StartClientCall(grpc::ClientContext* ctx, Resp* resp, const Prepare<Resp>& prepare,
                       Done done);

 private:
  // The call streams of grpc_call_stream.h are calls of this queue too.
  template <class SReq, class SResp>
  friend class ServerCallStream;
  template <class SReq, class SResp>
  friend class ClientCallStream;
  template <class SReq, class SResp>
  friend struct StreamMethod;

  enum TagKind { kRequest = 0, kFinish = 1, kDone = 2, kRead = 3, kWrite = 4, kStart = 5 };
  class Call;
  struct Tag {
    Call* call;
    TagKind kind;
  };
  class Call {
   public:
    virtual ~Call() = default;
    virtual void OnEvent(TagKind kind, bool ok) = 0;
  };
  template <class Resp>
  class ClientCall;
  struct MethodBase {
    virtual ~MethodBase() = default;
    // Posts one request for the method's next call.
    virtual void Post(ServerCallQueue* owner) = 0;
    int pending = 4;
    ThreadPool* pool = nullptr;
    RpcStats::Method* stats = nullptr;
  };
  template <class Req, class Resp>
  struct Method;
  template <class Req, class Resp>
  class UnaryCall;

  // Runs `post`, which requests a call, unless the queue is shutting down;
  // false then.
  bool PostIfRunning(const std::function<void()>& post);
  // The queue answered a request: with a call (`came`), or not (the server
  // shut down).
  void RequestAnswered(bool came);
  // A call that came has ended: answered, or cancelled.
  void CallEnded();
  // A call began on a stream that came (grpc_call_stream.h): WaitUntilNoCalls
  // waits for it as for a call of its own.
  void CallStarted();
  // A client call (a stream) to cancel at Shutdown, which `start` starts;
  // false, and nothing kept or started, when the queue is not running.
  bool AddClientCall(grpc::ClientContext* ctx, const std::function<void()>& start);
  void RemoveClientCall(grpc::ClientContext* ctx);
  // Runs `op` (which starts an operation on the queue) unless the queue is
  // shutting down: false then, and `op` did not run.
  bool RunIfRunning(const std::function<void()>& op);
  grpc::ServerCompletionQueue* cq() const { return cq_.get(); }
  void AddMethod(std::unique_ptr<MethodBase> method) { methods_.push_back(std::move(method)); }
  void Poll();

  const std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::vector<std::unique_ptr<MethodBase>> methods_;
  RpcStats stats_;
  std::thread thread_;
  absl::Mutex mu_;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  // Client calls started and not yet completed.
  absl::flat_hash_set<grpc::ClientContext*> client_calls_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  // Requests posted and not yet answered, and calls that came and have not
  // ended (WaitUntilNoCalls).
  int64_t requests_waiting_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t calls_running_ ABSL_GUARDED_BY(mu_) = 0;
};

namespace call_queue_internal {
// The bytes a decoded message holds, about: its encoded size.
inline int64_t MessageBytes(const google::protobuf::MessageLite& m) {
  return static_cast<int64_t>(m.ByteSizeLong());
}
inline int64_t MessageBytes(const grpc::ByteBuffer& b) { return static_cast<int64_t>(b.Length()); }
template <class M>
std::string MessageName(const M& m) {
  return m.GetTypeName();
}
inline std::string MessageName(const grpc::ByteBuffer&) { return "raw message"; }
inline std::string MessageName(const std::string&) { return "raw message"; }
// "RunStep" for distflow.RunStepRequest.
template <class Req>
std::string MethodName() {
  std::string name = MessageName(Req());
  const size_t dot = name.rfind('.');
  if (dot != std::string::npos) name = name.substr(dot + 1);
  constexpr std::string_view kSuffix = "Request";
  if (name.size() > kSuffix.size() &&
      name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
    name.resize(name.size() - kSuffix.size());
  }
  return name;
}
}  // namespace call_queue_internal

template <class Req, class Resp>
struct ServerCallQueue::Method final : MethodBase {
  RequestFn<Req, Resp> request;
  Handler<Req, Resp> handler;
  void Post(ServerCallQueue* owner) override;
};

// One call from request to finish. It lives until both its finish and the
// "call done" notice have come back from the queue.
template <class Req, class Resp>
class ServerCallQueue::UnaryCall final : public Call {
 public:
  UnaryCall(ServerCallQueue* owner, Method<Req, Resp>* method)
      : owner_(owner), method_(method), writer_(&ctx_) {
    ctx_.AsyncNotifyWhenDone(&tags_[kDone]);
  }
  void Request() {
    grpc::ServerCompletionQueue* cq = owner_->cq_.get();
    method_->request(&ctx_, &req_, &writer_, cq, cq, &tags_[kRequest]);
  }

  void OnEvent(TagKind kind, bool ok) override {
    switch (kind) {
      case kRequest: {
        owner_->RequestAnswered(ok);
        // Not ok: the server shut down before a call came; no other notice
        // follows.
        if (!ok) {
          delete this;
          return;
        }
        method_->Post(owner_);  // the next call of this method
        arrived_ = absl::Now();
        if (memory_budget::Limit() > 0) {
          auto charge = memory_budget::Reservation::Make(
              call_queue_internal::MessageBytes(req_),
              "decoding a " + call_queue_internal::MessageName(req_));
          if (!charge.ok()) {
            req_.Clear();
            method_->stats->Record(absl::Now() - arrived_, false);
            writer_.FinishWithError(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                                 std::string(charge.status().message())),
                                    &tags_[kFinish]);
            return;
          }
          request_charge_ = *std::move(charge);
        }
        if (method_->pool != nullptr) {
          method_->pool->Schedule([this] { Handle(); });
        } else {
          Handle();
        }
        return;
      }
      case kDone:
        if (ctx_.IsCancelled()) cm_.StartCancel();
        Unref();
        return;
      case kFinish:
        Unref();
        return;
      case kRead:
      case kWrite:
      case kStart:
        return;  // a unary call posts none of these
    }
  }

 private:
  void Handle() {
    method_->handler(&ctx_, &req_, &resp_, &cm_, [this](const grpc::Status& s) {
      if (s.ok() && memory_budget::Limit() > 0) {
        auto charge = memory_budget::Reservation::Make(
            call_queue_internal::MessageBytes(resp_),
            "encoding a " + call_queue_internal::MessageName(resp_));
        if (!charge.ok()) {
          resp_.Clear();
          method_->stats->Record(absl::Now() - arrived_, false);
          writer_.FinishWithError(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                               std::string(charge.status().message())),
                                  &tags_[kFinish]);
          return;
        }
        response_charge_ = *std::move(charge);
      }
      method_->stats->Record(absl::Now() - arrived_, s.ok());
      writer_.Finish(resp_, s, &tags_[kFinish]);
    });
  }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      ServerCallQueue* owner = owner_;
      delete this;
      owner->CallEnded();
    }
  }

  ServerCallQueue* const owner_;
  Method<Req, Resp>* const method_;
  grpc::ServerContext ctx_;
  Req req_;
  Resp resp_;
  grpc::ServerAsyncResponseWriter<Resp> writer_;
  CancellationManager cm_;
  absl::Time arrived_;
  // The request's and the response's bytes in the memory budget.
  memory_budget::Reservation request_charge_;
  memory_budget::Reservation response_charge_;
  // The finish and the done notice.
  std::atomic<int> refs_{2};
  Tag tags_[3] = {{this, kRequest}, {this, kFinish}, {this, kDone}};
};

template <class Req, class Resp>
void ServerCallQueue::Method<Req, Resp>::Post(ServerCallQueue* owner) {
  auto* call = new UnaryCall<Req, Resp>(owner, this);
  if (!owner->PostIfRunning([call] { call->Request(); })) delete call;
}

template <class Req, class Resp>
void ServerCallQueue::Add(RequestFn<Req, Resp> request, Handler<Req, Resp> handler, int pending,
                          ThreadPool* pool, std::string name) {
  auto method = std::make_unique<Method<Req, Resp>>();
  if (name.empty()) name = call_queue_internal::MethodName<Req>();
  method->stats = stats_.Add(name);
  method->request = std::move(request);
  method->handler = std::move(handler);
  method->pending = pending;
  method->pool = pool;
  methods_.push_back(std::move(method));
}

// One call to another task; deletes itself once its reply (or error) came.
template <class Resp>
class ServerCallQueue::ClientCall final : public Call {
 public:
  ClientCall(ServerCallQueue* owner, grpc::ClientContext* ctx, Done done)
      : owner_(owner), ctx_(ctx), done_(std::move(done)) {}

  std::unique_ptr<grpc::ClientAsyncResponseReader<Resp>> reader;
  Tag tag{this, kFinish};
  grpc::Status status;

  void OnEvent(TagKind /*kind*/, bool /*ok*/) override {
    {
      absl::MutexLock lock(&owner_->mu_);
      owner_->client_calls_.erase(ctx_);
    }
    reader.reset();
    Done done = std::move(done_);
    const grpc::Status s = status;
    delete this;
    done(s);
  }

 private:
  ServerCallQueue* const owner_;
  grpc::ClientContext* const ctx_;
  Done done_;
};

template <class Resp>
void ServerCallQueue::StartClientCall(grpc::ClientContext* ctx, Resp* resp,
                                      const Prepare<Resp>& prepare, Done done) {
  auto* call = new ClientCall<Resp>(this, ctx, std::move(done));
  {
    absl::MutexLock lock(&mu_);
    if (!shutdown_ && started_) {
      client_calls_.insert(ctx);
      call->reader = prepare(ctx, cq_.get());
      call->reader->StartCall();
      call->reader->Finish(resp, &call->status, &call->tag);
      return;
    }
  }
  call->status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "this server is not running");
  call->OnEvent(kFinish, false);
}

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_QUEUE_H_
