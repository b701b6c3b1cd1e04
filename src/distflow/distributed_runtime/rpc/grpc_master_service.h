// The MasterService over gRPC: each call is handed to the Master with a
// callback that finishes the call, so no gRPC thread waits for a session to
// be made or a step to run. RunStep and RunCallable are served on the
// server's completion queues (grpc_call_queues.h), the rest through the
// callback API.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_

#include <string>
#include <utility>

#include "distflow/distributed_runtime/master.h"
#include "distflow/distributed_runtime/rpc/grpc_call_queues.h"
#include "distflow/master_service.grpc.pb.h"

namespace distflow {

// Each method is marked exactly once, from the innermost wrapper out: the
// queue-served ones async, the rest callback.
using MasterServiceBase =
    MasterService::WithCallbackMethod_CreateSession<MasterService::WithCallbackMethod_ExtendSession<
        MasterService::WithCallbackMethod_PartialRunSetup<
            MasterService::WithCallbackMethod_CloseSession<
                MasterService::WithCallbackMethod_ListDevices<
                    MasterService::WithCallbackMethod_Reset<
                        MasterService::WithCallbackMethod_MakeCallable<
                            MasterService::WithCallbackMethod_ReleaseCallable<
                                MasterService::WithAsyncMethod_RunStep<
                                    MasterService::WithAsyncMethod_RunCallable<
                                        MasterService::Service>>>>>>>>>>;

class GrpcMasterService final : public MasterServiceBase {
 public:
  // Calls must carry `token` (see grpc_auth.h) unless it is empty.
  GrpcMasterService(Master* master, std::string token)
      : master_(master), token_(std::move(token)) {}

  grpc::ServerUnaryReactor* CreateSession(grpc::CallbackServerContext* ctx,
                                          const CreateSessionRequest* req,
                                          CreateSessionResponse* resp) override;
  grpc::ServerUnaryReactor* ExtendSession(grpc::CallbackServerContext* ctx,
                                          const ExtendSessionRequest* req,
                                          ExtendSessionResponse* resp) override;
  grpc::ServerUnaryReactor* PartialRunSetup(grpc::CallbackServerContext* ctx,
                                            const PartialRunSetupRequest* req,
                                            PartialRunSetupResponse* resp) override;
  grpc::ServerUnaryReactor* CloseSession(grpc::CallbackServerContext* ctx,
                                         const CloseSessionRequest* req,
                                         CloseSessionResponse* resp) override;
  grpc::ServerUnaryReactor* ListDevices(grpc::CallbackServerContext* ctx,
                                        const ListDevicesRequest* req,
                                        ListDevicesResponse* resp) override;
  grpc::ServerUnaryReactor* Reset(grpc::CallbackServerContext* ctx, const ResetRequest* req,
                                  ResetResponse* resp) override;
  grpc::ServerUnaryReactor* MakeCallable(grpc::CallbackServerContext* ctx,
                                         const MakeCallableRequest* req,
                                         MakeCallableResponse* resp) override;
  grpc::ServerUnaryReactor* ReleaseCallable(grpc::CallbackServerContext* ctx,
                                            const ReleaseCallableRequest* req,
                                            ReleaseCallableResponse* resp) override;

  // Adds RunStep and RunCallable to `queues` (before they start).
  void ServeOn(ServerCallQueues* queues);

 private:
  Master* const master_;
  const std::string token_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_
