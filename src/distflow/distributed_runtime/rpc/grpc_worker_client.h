// WorkerInterface over gRPC: the client side of one remote worker's
// WorkerService. `done` runs on a gRPC thread when the reply (or an error)
// arrives; CallOptions' deadline becomes the call's deadline and
// StartCancel cancels the call. Transport failures come back as Unavailable
// naming the worker's task. RecvTensor decodes the raw-bytes reply straight
// into the tensor; with a side-channel client it lets the producer offer a
// large tensor's bytes over its tensor side channel instead, and reads them
// from there (side_channel_client.h) on one of that client's few fetcher
// threads, under the same deadline and cancellation. Once a reply has named
// the producer's side channel port, later receives ask there by key (one
// TCP round trip, no gRPC call) while the side channel client has a thread
// free for them, and over gRPC otherwise or when that port takes no
// connection. On a server's call queue, RunGraph calls of up to
// kRunGraphStreamMaxBytes, and the receives that go over gRPC, go on one
// long-lived call stream per method and client (grpc_call_stream.h)
// instead of a unary call each; larger RunGraph requests, which would hold
// up the small calls behind them on the stream, stay unary. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_CLIENT_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "distflow/distributed_runtime/rpc/grpc_call_queue.h"
#include "distflow/distributed_runtime/rpc/grpc_call_stream.h"
#include "distflow/distributed_runtime/rpc/side_channel_client.h"
#include "distflow/distributed_runtime/worker_interface.h"
#include "distflow/framework/tensor.h"
#include "distflow/worker.pb.h"
#include "distflow/worker_service.grpc.pb.h"
#include "grpcpp/generic/generic_stub.h"

namespace distflow {

inline constexpr size_t kRunGraphStreamMaxBytes = 1 << 20;

class GrpcWorkerClient : public WorkerInterface {
 public:
  // `task` ("/job:worker/replica:0/task:1") names the peer in errors.
  // `side_channel` (may be null: gRPC only) fetches offered payloads from
  // `host`, the host of the task's address.
  GrpcWorkerClient(std::string task, std::shared_ptr<grpc::Channel> channel,
                   std::shared_ptr<SideChannelClient> side_channel = nullptr, std::string host = "",
                   std::shared_ptr<ServerCallQueue> queue = nullptr);

  const std::string& task() const override { return task_; }

  void GetStatusAsync(const GetStatusRequest* req, GetStatusResponse* resp, CallOptions* opts,
                      StatusCallback done) override;
  void CreateWorkerSessionAsync(const CreateWorkerSessionRequest* req,
                                CreateWorkerSessionResponse* resp, CallOptions* opts,
                                StatusCallback done) override;
  void DeleteWorkerSessionAsync(const DeleteWorkerSessionRequest* req,
                                DeleteWorkerSessionResponse* resp, CallOptions* opts,
                                StatusCallback done) override;
  void RegisterGraphAsync(const RegisterGraphRequest* req, RegisterGraphResponse* resp,
                          CallOptions* opts, StatusCallback done) override;
  void DeregisterGraphAsync(const DeregisterGraphRequest* req, DeregisterGraphResponse* resp,
                            CallOptions* opts, StatusCallback done) override;
  void RunGraphAsync(const RunGraphRequest* req, RunGraphResponse* resp, CallOptions* opts,
                     StatusCallback done) override;
  void CleanupGraphAsync(const CleanupGraphRequest* req, CleanupGraphResponse* resp,
                         CallOptions* opts, StatusCallback done) override;
  void CleanupAllAsync(const CleanupAllRequest* req, CleanupAllResponse* resp, CallOptions* opts,
                       StatusCallback done) override;

  // Fetches the tensor under `rendezvous_key` of step `step_id`, decoding
  // the raw-bytes response straight into `*tensor`.
  void RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key, Tensor* tensor,
                       bool* is_dead, CallOptions* opts, StatusCallback done) override;

 private:
  using Invoker = std::function<void(WorkerService::StubInterface::async_interface*,
                                     grpc::ClientContext*, std::function<void(grpc::Status)>)>;
  void Call(const char* name, CallOptions* opts, StatusCallback done, const Invoker& invoke);
  // The same call on the queue: `prepare` is the stub's PrepareAsyncX.
  template <class Resp>
  void CallOnQueue(const char* name, CallOptions* opts, StatusCallback done, Resp* resp,
                   const ServerCallQueue::Prepare<Resp>& prepare);

  // The stub's PrepareAsyncX and its callback API's X for one method.
  template <class Req, class Resp>
  using PrepareMethod = std::unique_ptr<grpc::ClientAsyncResponseReader<Resp>> (
      WorkerService::Stub::*)(grpc::ClientContext*, const Req&, grpc::CompletionQueue*);
  template <class Req, class Resp>
  using AsyncMethod = void (WorkerService::StubInterface::async_interface::*)(
      grpc::ClientContext*, const Req*, Resp*, std::function<void(grpc::Status)>);
  // Unary method `name`: on the call queue when there is one, through the
  // stub's callback API otherwise.
  template <class Req, class Resp>
  void Unary(const char* name, const Req* req, Resp* resp, CallOptions* opts, StatusCallback done,
             PrepareMethod<Req, Resp> prepare, AsyncMethod<Req, Resp> async);

  // What a receive needs, shared with its callbacks (which may outlive
  // the client).
  struct RecvPath;
  static void RecvOverGrpc(const std::shared_ptr<RecvPath>& path, int64_t step_id,
                           const std::string& rendezvous_key, Tensor* tensor, bool* is_dead,
                           CallOptions* opts, absl::Time deadline, StatusCallback done);
  // Decodes a RecvTensor reply, fetching an offered payload from the side
  // channel.
  static void FinishRecv(const std::shared_ptr<RecvPath>& path, const grpc::ByteBuffer& reply,
                         Tensor* tensor, bool* is_dead, CallOptions* opts, absl::Time deadline,
                         StatusCallback done);

  const std::string task_;
  const std::shared_ptr<ServerCallQueue> queue_;
  const std::shared_ptr<RecvPath> recv_;
  ClientCallStreamSlot<RunGraphStreamRequest, RunGraphStreamResponse> run_graph_stream_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_CLIENT_H_
