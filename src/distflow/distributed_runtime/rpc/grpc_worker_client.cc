#include "distflow/distributed_runtime/rpc/grpc_worker_client.h"

#include <atomic>
#include <chrono>
#include <optional>

#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "distflow/distributed_runtime/transfer_stats.h"

namespace distflow {

namespace {

// Owns a call's context for its lifetime and turns transport errors into
// statuses that name the peer.
struct CallState {
  grpc::ClientContext ctx;
  CallOptions* opts = nullptr;
  StatusCallback done;
  std::string task;
  const char* method = "";
};

// A call's status, naming the method and the peer for transport-level
// failures.
absl::Status CallStatus(const grpc::Status& s, const char* method, const std::string& task) {
  absl::Status status = FromGrpcStatus(s);
  // A status the server did not send is the call's own (gRPC's): the code
  // says what happened, and the message gets the method and the peer.
  if (!status.ok() && !IsServerStatus(s)) {
    switch (status.code()) {
      case absl::StatusCode::kUnavailable:
        status = errors::Unavailable(method, " to ", task, " failed: ", status.message());
        break;
      case absl::StatusCode::kDeadlineExceeded:
        status = errors::DeadlineExceeded(method, " to ", task, " timed out");
        break;
      case absl::StatusCode::kCancelled:
        status = errors::Cancelled(method, " to ", task, " was cancelled");
        break;
      default:
        break;
    }
  }
  return status;
}

// Runs the user's callback once with a status that names the peer for
// transport-level failures.
void FinishCall(const std::shared_ptr<CallState>& state, const grpc::Status& s) {
  if (state->opts != nullptr) state->opts->ClearCancelCallback();
  StatusCallback done = std::move(state->done);
  done(CallStatus(s, state->method, state->task));
}

// A call's state, its options' cancellation cancelling the live call (the
// cancel callback keeps the context alive). Null when the options were
// cancelled already: `done` has then run with Cancelled.
std::shared_ptr<CallState> BeginCall(const std::string& task, const char* method, CallOptions* opts,
                                     StatusCallback done) {
  auto state = std::make_shared<CallState>();
  state->opts = opts;
  state->done = std::move(done);
  state->task = task;
  state->method = method;
  if (opts != nullptr && opts->timeout_ms() > 0) {
    state->ctx.set_deadline(std::chrono::system_clock::now() +
                            std::chrono::milliseconds(opts->timeout_ms()));
  }
  state->ctx.set_wait_for_ready(false);
  if (opts == nullptr || opts->SetCancelCallback([state] { state->ctx.TryCancel(); })) {
    return state;
  }
  FinishCall(state, grpc::Status(grpc::StatusCode::CANCELLED, "Cancelled"));
  return nullptr;
}

}  // namespace

struct GrpcWorkerClient::RecvPath {
  RecvPath(std::string task, const std::shared_ptr<grpc::Channel>& channel,
           std::shared_ptr<SideChannelClient> side, std::string host,
           std::shared_ptr<ServerCallQueue> queue)
      : task(std::move(task)),
        generic(channel),
        stub(WorkerService::NewStub(channel)),
        side(std::move(side)),
        host(std::move(host)),
        queue(std::move(queue)),
        stream(this->queue.get(), [this](grpc::ClientContext* ctx, grpc::CompletionQueue* cq) {
          return stub->PrepareAsyncRecvTensorStream(ctx, cq);
        }) {}
  const std::string task;
  grpc::GenericStub generic;
  const std::unique_ptr<WorkerService::Stub> stub;
  const std::shared_ptr<SideChannelClient> side;  // null: gRPC only
  const std::string host;
  const std::shared_ptr<ServerCallQueue> queue;
  // The producer's side channel port, from its last reply that named one;
  // 0 while none has (or after it took no connection).
  std::atomic<int> side_port{0};
  // Receives that go over gRPC, on a server's queue.
  ClientCallStreamSlot<RecvTensorStreamRequest, RecvTensorStreamResponse> stream;
};

GrpcWorkerClient::GrpcWorkerClient(std::string task, std::shared_ptr<grpc::Channel> channel,
                                   std::shared_ptr<SideChannelClient> side_channel,
                                   std::string host, std::shared_ptr<ServerCallQueue> queue)
    : task_(task),
      queue_(queue),
      recv_(std::make_shared<RecvPath>(std::move(task), std::move(channel), std::move(side_channel),
                                       std::move(host), queue)),
      run_graph_stream_(queue.get(), [this](grpc::ClientContext* ctx, grpc::CompletionQueue* cq) {
        return recv_->stub->PrepareAsyncRunGraphStream(ctx, cq);
      }) {}

void GrpcWorkerClient::Call(const char* name, CallOptions* opts, StatusCallback done,
                            const Invoker& invoke) {
  std::shared_ptr<CallState> state = BeginCall(task_, name, opts, std::move(done));
  if (state == nullptr) return;
  invoke(recv_->stub->async(), &state->ctx, [state](grpc::Status s) { FinishCall(state, s); });
}

template <class Resp>
void GrpcWorkerClient::CallOnQueue(const char* name, CallOptions* opts, StatusCallback done,
                                   Resp* resp, const ServerCallQueue::Prepare<Resp>& prepare) {
  std::shared_ptr<CallState> state = BeginCall(task_, name, opts, std::move(done));
  if (state == nullptr) return;
  queue_->StartClientCall<Resp>(&state->ctx, resp, prepare,
                                [state](const grpc::Status& s) { FinishCall(state, s); });
}

template <class Req, class Resp>
void GrpcWorkerClient::Unary(const char* name, const Req* req, Resp* resp, CallOptions* opts,
                             StatusCallback done, PrepareMethod<Req, Resp> prepare,
                             AsyncMethod<Req, Resp> async) {
  if (queue_ != nullptr) {
    CallOnQueue(name, opts, std::move(done), resp,
                ServerCallQueue::Prepare<Resp>(
                    [this, req, prepare](grpc::ClientContext* ctx, grpc::CompletionQueue* cq) {
                      return (recv_->stub.get()->*prepare)(ctx, *req, cq);
                    }));
    return;
  }
  Call(name, opts, std::move(done),
       [req, resp, async](WorkerService::StubInterface::async_interface* a,
                          grpc::ClientContext* ctx, std::function<void(grpc::Status)> cb) {
         (a->*async)(ctx, req, resp, std::move(cb));
       });
}

void GrpcWorkerClient::GetStatusAsync(const GetStatusRequest* req, GetStatusResponse* resp,
                                      CallOptions* opts, StatusCallback done) {
  Unary("GetStatus", req, resp, opts, std::move(done), &WorkerService::Stub::PrepareAsyncGetStatus,
        &WorkerService::StubInterface::async_interface::GetStatus);
}
void GrpcWorkerClient::CreateWorkerSessionAsync(const CreateWorkerSessionRequest* req,
                                                CreateWorkerSessionResponse* resp,
                                                CallOptions* opts, StatusCallback done) {
  Unary("CreateWorkerSession", req, resp, opts, std::move(done),
        &WorkerService::Stub::PrepareAsyncCreateWorkerSession,
        &WorkerService::StubInterface::async_interface::CreateWorkerSession);
}
void GrpcWorkerClient::DeleteWorkerSessionAsync(const DeleteWorkerSessionRequest* req,
                                                DeleteWorkerSessionResponse* resp,
                                                CallOptions* opts, StatusCallback done) {
  Unary("DeleteWorkerSession", req, resp, opts, std::move(done),
        &WorkerService::Stub::PrepareAsyncDeleteWorkerSession,
        &WorkerService::StubInterface::async_interface::DeleteWorkerSession);
}
void GrpcWorkerClient::RegisterGraphAsync(const RegisterGraphRequest* req,
                                          RegisterGraphResponse* resp, CallOptions* opts,
                                          StatusCallback done) {
  Unary("RegisterGraph", req, resp, opts, std::move(done),
        &WorkerService::Stub::PrepareAsyncRegisterGraph,
        &WorkerService::StubInterface::async_interface::RegisterGraph);
}
void GrpcWorkerClient::DeregisterGraphAsync(const DeregisterGraphRequest* req,
                                            DeregisterGraphResponse* resp, CallOptions* opts,
                                            StatusCallback done) {
  Unary("DeregisterGraph", req, resp, opts, std::move(done),
        &WorkerService::Stub::PrepareAsyncDeregisterGraph,
        &WorkerService::StubInterface::async_interface::DeregisterGraph);
}
void GrpcWorkerClient::RunGraphAsync(const RunGraphRequest* req, RunGraphResponse* resp,
                                     CallOptions* opts, StatusCallback done) {
  if (queue_ != nullptr && req->ByteSizeLong() <= kRunGraphStreamMaxBytes &&
      run_graph_stream_.Call(req, resp, opts, [opts, task = task_, done](const grpc::Status& s) {
        if (opts != nullptr) opts->ClearCancelCallback();
        done(CallStatus(s, "RunGraph", task));
      })) {
    return;
  }
  Unary("RunGraph", req, resp, opts, std::move(done), &WorkerService::Stub::PrepareAsyncRunGraph,
        &WorkerService::StubInterface::async_interface::RunGraph);
}
void GrpcWorkerClient::CleanupGraphAsync(const CleanupGraphRequest* req, CleanupGraphResponse* resp,
                                         CallOptions* opts, StatusCallback done) {
  Unary("CleanupGraph", req, resp, opts, std::move(done),
        &WorkerService::Stub::PrepareAsyncCleanupGraph,
        &WorkerService::StubInterface::async_interface::CleanupGraph);
}
void GrpcWorkerClient::CleanupAllAsync(const CleanupAllRequest* req, CleanupAllResponse* resp,
                                       CallOptions* opts, StatusCallback done) {
  Unary("CleanupAll", req, resp, opts, std::move(done),
        &WorkerService::Stub::PrepareAsyncCleanupAll,
        &WorkerService::StubInterface::async_interface::CleanupAll);
}

void GrpcWorkerClient::RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key,
                                       Tensor* tensor, bool* is_dead, CallOptions* opts,
                                       StatusCallback done) {
  // The side channel keeps to the call's deadline, counted from now.
  const absl::Time deadline = opts != nullptr && opts->timeout_ms() > 0
                                  ? absl::Now() + absl::Milliseconds(opts->timeout_ms())
                                  : absl::InfiniteFuture();
  const int port = recv_->side_port.load(std::memory_order_relaxed);
  if (recv_->side != nullptr && port > 0) {
    SideChannelClient::KeyedArgs args;
    args.host = recv_->host;
    args.port = port;
    args.step_id = step_id;
    args.key = rendezvous_key;
    args.token = ProcessToken();
    args.deadline = deadline;
    args.opts = opts;
    args.task = task_;
    args.tensor = tensor;
    args.is_dead = is_dead;
    // `done` moves into the callback only once it is sure to run.
    auto shared_done = std::make_shared<StatusCallback>(std::move(done));
    const bool started = recv_->side->TryRecvAsync(
        std::move(args), [path = recv_, port, step_id, rendezvous_key, tensor, is_dead, opts,
                          deadline, shared_done](const absl::Status& s, bool sent) {
          StatusCallback done = std::move(*shared_done);
          if (!sent) {
            // Nothing listens there now (a restarted task): ask over gRPC,
            // whose reply names the new port.
            int expected = port;
            path->side_port.compare_exchange_strong(expected, 0);
            RecvOverGrpc(path, step_id, rendezvous_key, tensor, is_dead, opts, deadline,
                         std::move(done));
            return;
          }
          if (s.ok()) {
            CountTensorTransfer(false, TensorTransport::kSideChannel, path->task,
                                static_cast<int64_t>(tensor->TotalBytes()));
          }
          done(s);
        });
    if (started) return;
    done = std::move(*shared_done);
  }
  RecvOverGrpc(recv_, step_id, rendezvous_key, tensor, is_dead, opts, deadline, std::move(done));
}

void GrpcWorkerClient::FinishRecv(const std::shared_ptr<RecvPath>& path,
                                  const grpc::ByteBuffer& reply, Tensor* tensor, bool* is_dead,
                                  CallOptions* opts, absl::Time deadline, StatusCallback done) {
  int64_t send_start = 0;
  std::optional<SideChannelOffer> offer;
  int port = 0;
  absl::Status decoded = DecodeRecvTensorResponse(reply, tensor, is_dead, &send_start,
                                                  path->side != nullptr ? &offer : nullptr, &port);
  if (decoded.ok() && offer.has_value() && offer->follows) {
    decoded = errors::DataLoss("a RecvTensor reply from ", path->task,
                               " says bytes follow, which only a keyed reply may");
  }
  if (decoded.ok() && path->side != nullptr) {
    if (offer.has_value()) port = offer->port;
    if (port > 0) path->side_port.store(port, std::memory_order_relaxed);
  }
  if (!decoded.ok() || !offer.has_value()) {
    if (decoded.ok()) {
      CountTensorTransfer(false, TensorTransport::kGrpc, path->task,
                          static_cast<int64_t>(tensor->TotalBytes()));
    }
    done(decoded);
    return;
  }
  // A read of many megabytes must not hold a gRPC thread: it goes to the
  // side channel client's own few.
  SideChannelClient::FetchArgs fetch;
  fetch.host = path->host;
  fetch.port = offer->port;
  fetch.ticket = offer->ticket;
  fetch.dst = tensor->raw_data();
  fetch.bytes = offer->payload_bytes;
  fetch.deadline = deadline;
  fetch.opts = opts;
  fetch.task = path->task;
  path->side->FetchAsync(std::move(fetch), [task = path->task, bytes = offer->payload_bytes, tensor,
                                            done](const absl::Status& fetched) {
    if (fetched.ok()) {
      CanonicalizeBools(tensor);
      CountTensorTransfer(false, TensorTransport::kSideChannel, task, static_cast<int64_t>(bytes));
    } else {
      *tensor = Tensor();
    }
    done(fetched);
  });
}

void GrpcWorkerClient::RecvOverGrpc(const std::shared_ptr<RecvPath>& path, int64_t step_id,
                                    const std::string& rendezvous_key, Tensor* tensor,
                                    bool* is_dead, CallOptions* opts, absl::Time deadline,
                                    StatusCallback done) {
  struct RecvState {
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
  };
  // The request and, on the call stream, the reply's bytes live with the
  // call.
  struct StreamState {
    RecvTensorRequest request;
    std::string reply;
  };
  auto state = std::make_shared<StreamState>();
  state->request.set_step_id(step_id);
  state->request.set_rendezvous_key(rendezvous_key);
  state->request.set_side_channel_ok(path->side != nullptr);
  if (path->queue != nullptr) {
    auto finish = [path, state, tensor, is_dead, opts, deadline,
                   done](const grpc::Status& s) mutable {
      if (opts != nullptr) opts->ClearCancelCallback();
      absl::Status status = CallStatus(s, "RecvTensor", path->task);
      if (!status.ok()) {
        done(status);
        return;
      }
      // The reply's bytes move into the buffer the decoder reads.
      auto* bytes = new std::string(std::move(state->reply));
      grpc::Slice slice(
          bytes->data(), bytes->size(), [](void* p) { delete static_cast<std::string*>(p); },
          bytes);
      FinishRecv(path, grpc::ByteBuffer(&slice, 1), tensor, is_dead, opts, deadline,
                 std::move(done));
    };
    if (path->stream.Call(&state->request, &state->reply, opts, finish)) return;
  }
  auto bufs = std::make_shared<RecvState>();
  {
    grpc::Slice slice(state->request.SerializeAsString());
    bufs->request = grpc::ByteBuffer(&slice, 1);
  }
  auto wrapped = [path, bufs, tensor, is_dead, opts, deadline,
                  done = std::move(done)](const absl::Status& s) {
    if (!s.ok()) {
      done(s);
      return;
    }
    FinishRecv(path, bufs->response, tensor, is_dead, opts, deadline, done);
  };
  std::shared_ptr<CallState> call = BeginCall(path->task, "RecvTensor", opts, std::move(wrapped));
  if (call == nullptr) return;
  if (path->queue != nullptr) {
    path->queue->StartClientCall<grpc::ByteBuffer>(
        &call->ctx, &bufs->response,
        [path, bufs](grpc::ClientContext* ctx, grpc::CompletionQueue* cq) {
          return path->generic.PrepareUnaryCall(ctx, "/distflow.WorkerService/RecvTensor",
                                                bufs->request, cq);
        },
        [call](const grpc::Status& s) { FinishCall(call, s); });
    return;
  }
  path->generic.UnaryCall(&call->ctx, "/distflow.WorkerService/RecvTensor", grpc::StubOptions(),
                          &bufs->request, &bufs->response,
                          [call](grpc::Status s) { FinishCall(call, s); });
}

}  // namespace distflow
