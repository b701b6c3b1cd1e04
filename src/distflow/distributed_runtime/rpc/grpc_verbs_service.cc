#include "distflow/distributed_runtime/rpc/grpc_verbs_service.h"

#include "absl/synchronization/notification.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"

namespace distflow {

grpc::ServerUnaryReactor* GrpcVerbsService::GetRemoteAddress(grpc::CallbackServerContext* ctx,
                                                             const GetRemoteAddressRequest* req,
                                                             GetRemoteAddressResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(mgr_->HandleGetRemoteAddress(*req, resp)));
  return reactor;
}

RemoteAddressExchange GrpcRemoteAddressExchange(std::shared_ptr<grpc::Channel> channel) {
  auto stub = std::shared_ptr<VerbsService::Stub>(VerbsService::NewStub(channel));
  return [stub](const GetRemoteAddressRequest& req, GetRemoteAddressResponse* resp,
                absl::Time deadline) {
    // Through the callback API, as every other call of this process: a
    // blocking call leaves gRPC an executor thread that delays the
    // process's shutdown.
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(deadline));
    absl::Notification done;
    grpc::Status status;
    stub->async()->GetRemoteAddress(&ctx, &req, resp, [&](grpc::Status s) {
      status = std::move(s);
      done.Notify();
    });
    // gRPC ends the call at its deadline; the call always completes.
    done.WaitForNotification();
    return FromGrpcStatus(status);
  };
}

}  // namespace distflow
