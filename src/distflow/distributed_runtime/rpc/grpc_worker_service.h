// The WorkerService over gRPC, served on the server's completion queue
// (grpc_call_queue.h): each RPC is handed to the Worker and finished when
// the Worker's callback runs, so no thread blocks on a step or a tensor.
// The per-step methods (RunGraph, RecvTensor, GetStatus) are handled on the
// polling thread, also when they come on a call stream (RunGraphStream,
// RecvTensorStream, grpc_call_stream.h); the others, which may take long or wait (registering a
// graph, ending a session), on a pool. RecvTensor uses raw byte buffers so
// tensor bytes are sent from the tensor's own memory. A RunGraph whose
// caller cancels (or whose deadline passes) cancels the step. A RecvTensor
// whose caller can take a side channel gets a large tensor's bytes offered
// over the server's tensor side channel (side_channel_server.h), when it
// has one.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_SERVICE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_SERVICE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "distflow/distributed_runtime/rpc/grpc_call_queue.h"
#include "distflow/distributed_runtime/rpc/side_channel_server.h"
#include "distflow/distributed_runtime/worker.h"
#include "distflow/worker_service.grpc.pb.h"

namespace distflow {

// Every method async (RecvTensor raw), each marked once.
using WorkerServiceBase =
    WorkerService::WithAsyncMethod_GetStatus<WorkerService::WithAsyncMethod_CreateWorkerSession<
        WorkerService::WithAsyncMethod_DeleteWorkerSession<
            WorkerService::WithAsyncMethod_RegisterGraph<
                WorkerService::WithAsyncMethod_DeregisterGraph<
                    WorkerService::WithAsyncMethod_RunGraph<
                        WorkerService::WithAsyncMethod_RunGraphStream<
                            WorkerService::WithAsyncMethod_CleanupGraph<
                                WorkerService::WithAsyncMethod_CleanupAll<
                                    WorkerService::WithRawMethod_RecvTensor<
                                        WorkerService::WithAsyncMethod_RecvTensorStream<
                                            WorkerService::WithAsyncMethod_Logging<
                                                WorkerService::WithAsyncMethod_Tracing<
                                                    WorkerService::Service>>>>>>>>>>>>>;

// Answers a RecvTensor from `worker`: `done` gets the reply's bytes. Over
// gRPC (`keyed` false) a large tensor's bytes are offered over
// `side_channel` (may be null) and the reply names its port, when the
// request says side_channel_ok. For a keyed receive on the side channel a
// large fixed-size tensor's reply says its bytes follow, and `done` gets
// the tensor to send after the reply (an empty tensor otherwise). `cm` may
// cancel the wait.
using RecvTensorReplyDone =
    std::function<void(const absl::Status&, grpc::ByteBuffer reply, Tensor follows)>;
void AnswerRecvTensor(Worker* worker, SideChannelServer* side_channel, CancellationManager* cm,
                      std::shared_ptr<const RecvTensorRequest> request, bool keyed,
                      RecvTensorReplyDone done);

class GrpcWorkerService final : public WorkerServiceBase {
 public:
  // Calls must carry `token` (see grpc_auth.h) unless it is empty.
  // `side_channel` may be null (no side channel), else must outlive this.
  GrpcWorkerService(Worker* worker, std::string token, SideChannelServer* side_channel = nullptr)
      : worker_(worker), token_(std::move(token)), side_channel_(side_channel) {}

  // Adds every method to `queue` (before it starts); the ones that may
  // wait run on `pool`, which must outlive the queue's Shutdown.
  void ServeOn(ServerCallQueue* queue, ThreadPool* pool);

 private:
  Worker* const worker_;
  const std::string token_;
  SideChannelServer* const side_channel_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_SERVICE_H_
