// The MasterService over gRPC (callback API): each call is handed to the
// Master with a callback that finishes the call, so no gRPC thread waits for
// a session to be made or a step to run.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_

#include <string>
#include <utility>

#include "distflow/distributed_runtime/master.h"
#include "distflow/master_service.grpc.pb.h"

namespace distflow {

class GrpcMasterService final : public MasterService::CallbackService {
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
  grpc::ServerUnaryReactor* RunStep(grpc::CallbackServerContext* ctx, const RunStepRequest* req,
                                    RunStepResponse* resp) override;
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
  grpc::ServerUnaryReactor* RunCallable(grpc::CallbackServerContext* ctx,
                                        const RunCallableRequest* req,
                                        RunCallableResponse* resp) override;
  grpc::ServerUnaryReactor* ReleaseCallable(grpc::CallbackServerContext* ctx,
                                            const ReleaseCallableRequest* req,
                                            ReleaseCallableResponse* resp) override;

 private:
  Master* const master_;
  const std::string token_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_
