#include "distflow/distributed_runtime/rpc/grpc_master_service.h"

#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"

namespace distflow {
namespace {

// The callback that finishes a call with the Master's status.
Master::Done FinishWith(grpc::ServerUnaryReactor* reactor) {
  return [reactor](const absl::Status& s) { reactor->Finish(ToGrpcStatus(s)); };
}

}  // namespace

grpc::ServerUnaryReactor* GrpcMasterService::CreateSession(grpc::CallbackServerContext* ctx,
                                                           const CreateSessionRequest* req,
                                                           CreateSessionResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  master_->CreateSession(req, resp, FinishWith(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* GrpcMasterService::ExtendSession(grpc::CallbackServerContext* ctx,
                                                           const ExtendSessionRequest* req,
                                                           ExtendSessionResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  master_->ExtendSession(req, resp, FinishWith(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* GrpcMasterService::PartialRunSetup(grpc::CallbackServerContext* ctx,
                                                             const PartialRunSetupRequest* req,
                                                             PartialRunSetupResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  master_->PartialRunSetup(req, resp, FinishWith(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* GrpcMasterService::CloseSession(grpc::CallbackServerContext* ctx,
                                                          const CloseSessionRequest* req,
                                                          CloseSessionResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  master_->CloseSession(req, resp, FinishWith(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* GrpcMasterService::ListDevices(grpc::CallbackServerContext* ctx,
                                                         const ListDevicesRequest* req,
                                                         ListDevicesResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  master_->ListDevices(req, resp, FinishWith(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* GrpcMasterService::Reset(grpc::CallbackServerContext* ctx,
                                                   const ResetRequest* req, ResetResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  master_->Reset(req, resp, FinishWith(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* GrpcMasterService::MakeCallable(grpc::CallbackServerContext* ctx,
                                                          const MakeCallableRequest* req,
                                                          MakeCallableResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  master_->MakeCallable(req, resp, FinishWith(reactor));
  return reactor;
}

grpc::ServerUnaryReactor* GrpcMasterService::ReleaseCallable(grpc::CallbackServerContext* ctx,
                                                             const ReleaseCallableRequest* req,
                                                             ReleaseCallableResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  master_->ReleaseCallable(req, resp, FinishWith(reactor));
  return reactor;
}

void GrpcMasterService::ServeOn(ServerCallQueues* queues) {
  using Done = ServerCallQueues::Done;
  // A client that cancels or goes away cancels its step.
  queues->Add<RunStepRequest, RunStepResponse>(
      [this](auto... args) { RequestRunStep(args...); },
      [this](grpc::ServerContext* ctx, const RunStepRequest* req, RunStepResponse* resp,
             CancellationManager* cm, Done done) {
        grpc::Status auth = CheckToken(ctx, token_);
        if (!auth.ok()) {
          done(auth);
          return;
        }
        master_->RunStep(req, resp, cm, [done = std::move(done)](const absl::Status& s) {
          done(ToGrpcStatus(s));
        });
      });
  queues->Add<RunCallableRequest, RunCallableResponse>(
      [this](auto... args) { RequestRunCallable(args...); },
      [this](grpc::ServerContext* ctx, const RunCallableRequest* req, RunCallableResponse* resp,
             CancellationManager* cm, Done done) {
        grpc::Status auth = CheckToken(ctx, token_);
        if (!auth.ok()) {
          done(auth);
          return;
        }
        master_->RunCallable(req, resp, cm, [done = std::move(done)](const absl::Status& s) {
          done(ToGrpcStatus(s));
        });
      });
}

}  // namespace distflow
