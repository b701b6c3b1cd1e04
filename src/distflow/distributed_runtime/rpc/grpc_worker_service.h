// The WorkerService over gRPC: each RPC is handed to the Worker and finished
// when the Worker's callback runs, so no server thread blocks on a step or a
// tensor. The per-step methods (RunGraph, RecvTensor) and GetStatus are
// served on the server's completion queues (grpc_call_queues.h), the rest
// through the callback API. RecvTensor uses raw byte buffers so tensor
// bytes are sent from the tensor's own memory. A RunGraph whose caller
// cancels (or whose deadline passes) cancels the step. A RecvTensor whose
// caller can take a side channel gets a large tensor's bytes offered over
// the server's tensor side channel (side_channel_server.h), when it has one.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_SERVICE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_SERVICE_H_

#include <string>
#include <utility>

#include "distflow/distributed_runtime/rpc/grpc_call_queues.h"
#include "distflow/distributed_runtime/rpc/side_channel_server.h"
#include "distflow/distributed_runtime/worker.h"
#include "distflow/worker_service.grpc.pb.h"

namespace distflow {

// Each method is marked exactly once, from the innermost wrapper out: the
// queue-served ones async (raw for RecvTensor), the rest callback.
using WorkerServiceBase = WorkerService::WithCallbackMethod_CreateWorkerSession<
    WorkerService::WithCallbackMethod_DeleteWorkerSession<
        WorkerService::WithCallbackMethod_RegisterGraph<
            WorkerService::WithCallbackMethod_DeregisterGraph<
                WorkerService::WithCallbackMethod_CleanupGraph<
                    WorkerService::WithCallbackMethod_CleanupAll<
                        WorkerService::WithCallbackMethod_Logging<
                            WorkerService::WithCallbackMethod_Tracing<
                                WorkerService::WithAsyncMethod_GetStatus<
                                    WorkerService::WithAsyncMethod_RunGraph<
                                        WorkerService::WithRawMethod_RecvTensor<
                                            WorkerService::Service>>>>>>>>>>>;

class GrpcWorkerService final : public WorkerServiceBase {
 public:
  // Calls must carry `token` (see grpc_auth.h) unless it is empty.
  // `side_channel` may be null (no side channel), else must outlive this.
  GrpcWorkerService(Worker* worker, std::string token, SideChannelServer* side_channel = nullptr)
      : worker_(worker), token_(std::move(token)), side_channel_(side_channel) {}

  grpc::ServerUnaryReactor* CreateWorkerSession(grpc::CallbackServerContext* ctx,
                                                const CreateWorkerSessionRequest* req,
                                                CreateWorkerSessionResponse* resp) override;
  grpc::ServerUnaryReactor* DeleteWorkerSession(grpc::CallbackServerContext* ctx,
                                                const DeleteWorkerSessionRequest* req,
                                                DeleteWorkerSessionResponse* resp) override;
  grpc::ServerUnaryReactor* RegisterGraph(grpc::CallbackServerContext* ctx,
                                          const RegisterGraphRequest* req,
                                          RegisterGraphResponse* resp) override;
  grpc::ServerUnaryReactor* DeregisterGraph(grpc::CallbackServerContext* ctx,
                                            const DeregisterGraphRequest* req,
                                            DeregisterGraphResponse* resp) override;
  grpc::ServerUnaryReactor* CleanupGraph(grpc::CallbackServerContext* ctx,
                                         const CleanupGraphRequest* req,
                                         CleanupGraphResponse* resp) override;
  grpc::ServerUnaryReactor* CleanupAll(grpc::CallbackServerContext* ctx,
                                       const CleanupAllRequest* req,
                                       CleanupAllResponse* resp) override;
  grpc::ServerUnaryReactor* Logging(grpc::CallbackServerContext* ctx, const LoggingRequest* req,
                                    LoggingResponse* resp) override;
  grpc::ServerUnaryReactor* Tracing(grpc::CallbackServerContext* ctx, const TracingRequest* req,
                                    TracingResponse* resp) override;

  // Adds GetStatus, RunGraph and RecvTensor to `queues` (before they start).
  void ServeOn(ServerCallQueues* queues);

 private:
  Worker* const worker_;
  const std::string token_;
  SideChannelServer* const side_channel_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_SERVICE_H_
