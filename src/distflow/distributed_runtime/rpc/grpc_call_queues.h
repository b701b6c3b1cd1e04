// Serves a server's hottest unary methods (RunStep, RunGraph, RecvTensor...)
// on gRPC completion queues, each polled by a thread of its own, instead of
// through the callback API. A call is read, handled and answered on the
// thread that polled it: no hand-off to gRPC's callback executor, which cost
// about a third of a loopback round trip (an echo answered 103 us through a
// callback service, 67 us through a completion queue, on 2 cores).
//
// Handlers get the call's CancellationManager, cancelled when the client
// cancels, its deadline passes or it goes away, and a `done` to call exactly
// once with the call's status (from any thread). A handler runs on a queue's
// thread, so it must not block for long: the methods served here hand their
// work on (the executor, the rendezvous) and finish by callback.
//
// Order of use: construct with the ServerBuilder before BuildAndStart, Add
// the methods, Start once the server runs, and Shutdown after the server's
// Shutdown has returned (every call is then finished); destroy the queues
// after the server.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_QUEUES_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_QUEUES_H_

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distflow/framework/cancellation.h"
#include "grpcpp/grpcpp.h"

namespace distflow {

class ServerCallQueues {
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

  // `threads` queues, one polling thread each.
  ServerCallQueues(grpc::ServerBuilder* builder, int threads);
  ~ServerCallQueues();
  ServerCallQueues(const ServerCallQueues&) = delete;
  ServerCallQueues& operator=(const ServerCallQueues&) = delete;

  // Before Start. `pending` calls of the method wait on each queue.
  template <class Req, class Resp>
  void Add(RequestFn<Req, Resp> request, Handler<Req, Resp> handler, int pending = 4);

  void Start();
  // Idempotent. Stops posting requests, shuts the queues and joins threads.
  void Shutdown();

 private:
  enum TagKind { kRequest = 0, kFinish = 1, kDone = 2 };
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
  struct MethodBase {
    virtual ~MethodBase() = default;
    // Posts one request for the next call on `cq`.
    virtual void Post(ServerCallQueues* owner, grpc::ServerCompletionQueue* cq) = 0;
    int pending = 4;
  };
  template <class Req, class Resp>
  struct Method;
  template <class Req, class Resp>
  class UnaryCall;

  // Runs `post` unless the queues are shutting down; false then.
  bool PostIfRunning(const std::function<void()>& post);
  void Poll(grpc::ServerCompletionQueue* cq);

  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues_;
  std::vector<std::unique_ptr<MethodBase>> methods_;
  std::vector<std::thread> threads_;
  absl::Mutex mu_;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ = false;
};

template <class Req, class Resp>
struct ServerCallQueues::Method final : MethodBase {
  RequestFn<Req, Resp> request;
  Handler<Req, Resp> handler;
  void Post(ServerCallQueues* owner, grpc::ServerCompletionQueue* cq) override;
};

// One call from request to finish. It lives until both its finish and the
// "call done" notice have come back from the queue.
template <class Req, class Resp>
class ServerCallQueues::UnaryCall final : public Call {
 public:
  UnaryCall(ServerCallQueues* owner, Method<Req, Resp>* method, grpc::ServerCompletionQueue* cq)
      : owner_(owner), method_(method), cq_(cq), writer_(&ctx_) {
    ctx_.AsyncNotifyWhenDone(&tags_[kDone]);
  }
  void Request() { method_->request(&ctx_, &req_, &writer_, cq_, cq_, &tags_[kRequest]); }

  void OnEvent(TagKind kind, bool ok) override {
    switch (kind) {
      case kRequest: {
        // Not ok: the server shut down before a call came; no other notice
        // follows.
        if (!ok) {
          delete this;
          return;
        }
        method_->Post(owner_, cq_);  // the next call of this method
        method_->handler(&ctx_, &req_, &resp_, &cm_, [this](const grpc::Status& s) {
          writer_.Finish(resp_, s, &tags_[kFinish]);
        });
        return;
      }
      case kDone:
        if (ctx_.IsCancelled()) cm_.StartCancel();
        Unref();
        return;
      case kFinish:
        Unref();
        return;
    }
  }

 private:
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  ServerCallQueues* const owner_;
  Method<Req, Resp>* const method_;
  grpc::ServerCompletionQueue* const cq_;
  grpc::ServerContext ctx_;
  Req req_;
  Resp resp_;
  grpc::ServerAsyncResponseWriter<Resp> writer_;
  CancellationManager cm_;
  // The finish and the done notice.
  std::atomic<int> refs_{2};
  Tag tags_[3] = {{this, kRequest}, {this, kFinish}, {this, kDone}};
};

template <class Req, class Resp>
void ServerCallQueues::Method<Req, Resp>::Post(ServerCallQueues* owner,
                                               grpc::ServerCompletionQueue* cq) {
  auto* call = new UnaryCall<Req, Resp>(owner, this, cq);
  if (!owner->PostIfRunning([call] { call->Request(); })) delete call;
}

template <class Req, class Resp>
void ServerCallQueues::Add(RequestFn<Req, Resp> request, Handler<Req, Resp> handler, int pending) {
  auto method = std::make_unique<Method<Req, Resp>>();
  method->request = std::move(request);
  method->handler = std::move(handler);
  method->pending = pending;
  methods_.push_back(std::move(method));
}

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_QUEUES_H_
