#include "distflow/distributed_runtime/rpc/grpc_master_service.h"

#include "distflow/distributed_runtime/rpc/grpc_util.h"

namespace distflow {

#define DF_MASTER_METHOD(NAME, REQ, RESP)                                              \
  grpc::ServerUnaryReactor* GrpcMasterService::NAME(grpc::CallbackServerContext* ctx, \
                                                    const REQ* req, RESP* resp) {      \
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();                         \
    master_->NAME(req, resp, [reactor](const absl::Status& s) {                        \
      reactor->Finish(ToGrpcStatus(s));                                                \
    });                                                                                \
    return reactor;                                                                    \
  }
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

}  // namespace distflow
