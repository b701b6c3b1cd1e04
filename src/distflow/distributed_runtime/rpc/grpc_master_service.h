// The MasterService over gRPC (callback API); every call is handed to the
// Master and finished from its callback.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_

#include "distflow/distributed_runtime/master.h"
#include "distflow/master_service.grpc.pb.h"

namespace distflow {

class GrpcMasterService final : public MasterService::CallbackService {
 public:
  explicit GrpcMasterService(Master* master) : master_(master) {}

#define DF_MASTER_METHOD(NAME, REQ, RESP) \
  grpc::ServerUnaryReactor* NAME(grpc::CallbackServerContext* ctx, const REQ* req, RESP* resp) override;
  DF_MASTER_METHOD(CreateSession, CreateSessionRequest, CreateSessionResponse)
  DF_MASTER_METHOD(ExtendSession, ExtendSessionRequest, ExtendSessionResponse)
  DF_MASTER_METHOD(PartialRunSetup, PartialRunSetupRequest, PartialRunSetupResponse)
  DF_MASTER_METHOD(RunStep, RunStepRequest, RunStepResponse)
  DF_MASTER_METHOD(CloseSession, CloseSessionRequest, CloseSessionResponse)
  DF_MASTER_METHOD(ListDevices, ListDevicesRequest, ListDevicesResponse)
  DF_MASTER_METHOD(Reset, ResetRequest, ResetResponse)
  DF_MASTER_METHOD(MakeCallable, MakeCallableRequest, MakeCallableResponse)
  DF_MASTER_METHOD(RunCallable, RunCallableRequest, RunCallableResponse)
  DF_MASTER_METHOD(ReleaseCallable, ReleaseCallableRequest, ReleaseCallableResponse)
#undef DF_MASTER_METHOD

 private:
  Master* const master_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_MASTER_SERVICE_H_
