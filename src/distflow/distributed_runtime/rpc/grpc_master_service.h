// The MasterService over gRPC, served on the server's completion queue
// (grpc_call_queue.h): each call is handed to the Master with a callback
// that finishes the call, so no thread waits for a session to be made or a
// step to run. RunStep and RunCallable are handled on the polling thread;
// the others, which may wait on workers, on a pool.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_

#include <string>
#include <utility>

#include "distflow/distributed_runtime/master.h"
#include "distflow/distributed_runtime/rpc/grpc_call_queue.h"
#include "distflow/master_service.grpc.pb.h"

namespace distflow {

// Every method async, each marked once.
using MasterServiceBase = MasterService::WithAsyncMethod_CreateSession<
    MasterService::WithAsyncMethod_ExtendSession<MasterService::WithAsyncMethod_PartialRunSetup<
        MasterService::WithAsyncMethod_RunStep<MasterService::WithAsyncMethod_RunStepStream<
            MasterService::WithAsyncMethod_CloseSession<MasterService::WithAsyncMethod_ListDevices<
                MasterService::WithAsyncMethod_Reset<MasterService::WithAsyncMethod_MakeCallable<
                    MasterService::WithAsyncMethod_RunCallable<
                        MasterService::WithAsyncMethod_RunCallableStream<
                            MasterService::WithAsyncMethod_ReleaseCallable<
                                MasterService::Service>>>>>>>>>>>>;

class GrpcMasterService final : public MasterServiceBase {
 public:
  // Calls must carry `token` (see grpc_auth.h) unless it is empty.
  GrpcMasterService(Master* master, std::string token)
      : master_(master), token_(std::move(token)) {}

  // Adds every method to `queue` (before it starts); the ones that may
  // wait run on `pool`, which must outlive the queue's Shutdown.
  void ServeOn(ServerCallQueue* queue, ThreadPool* pool);

 private:
  Master* const master_;
  const std::string token_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_
