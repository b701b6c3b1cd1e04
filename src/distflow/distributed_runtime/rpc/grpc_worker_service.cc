#include "distflow/distributed_runtime/rpc/grpc_worker_service.h"

#include <memory>

#include "distflow/core/env.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"

namespace distflow {
namespace {

grpc::ServerUnaryReactor* Finished(grpc::CallbackServerContext* ctx, const absl::Status& s) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(s));
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* GrpcWorkerService::GetStatus(grpc::CallbackServerContext* ctx,
                                                       const GetStatusRequest* req,
                                                       GetStatusResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  worker_->GetStatus(*req, resp);
  return Finished(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcWorkerService::CreateWorkerSession(
    grpc::CallbackServerContext* ctx, const CreateWorkerSessionRequest* req,
    CreateWorkerSessionResponse* /*resp*/) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  return Finished(ctx, worker_->CreateWorkerSession(*req));
}

grpc::ServerUnaryReactor* GrpcWorkerService::DeleteWorkerSession(
    grpc::CallbackServerContext* ctx, const DeleteWorkerSessionRequest* req,
    DeleteWorkerSessionResponse* /*resp*/) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  return Finished(ctx, worker_->DeleteWorkerSession(*req));
}

grpc::ServerUnaryReactor* GrpcWorkerService::RegisterGraph(grpc::CallbackServerContext* ctx,
                                                           const RegisterGraphRequest* req,
                                                           RegisterGraphResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  return Finished(ctx, worker_->RegisterGraph(*req, resp));
}

grpc::ServerUnaryReactor* GrpcWorkerService::DeregisterGraph(grpc::CallbackServerContext* ctx,
                                                             const DeregisterGraphRequest* req,
                                                             DeregisterGraphResponse* /*resp*/) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  return Finished(ctx, worker_->DeregisterGraph(*req));
}

grpc::ServerUnaryReactor* GrpcWorkerService::RunGraph(grpc::CallbackServerContext* ctx,
                                                      const RunGraphRequest* req,
                                                      RunGraphResponse* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  auto* reactor = new CancellableReactor;
  worker_->RunGraphAsync(reactor->cm(), req, resp,
                         [reactor](const absl::Status& s) { reactor->Finish(ToGrpcStatus(s)); });
  return reactor;
}

grpc::ServerUnaryReactor* GrpcWorkerService::CleanupGraph(grpc::CallbackServerContext* ctx,
                                                          const CleanupGraphRequest* req,
                                                          CleanupGraphResponse* /*resp*/) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  return Finished(ctx, worker_->CleanupGraph(*req));
}

grpc::ServerUnaryReactor* GrpcWorkerService::CleanupAll(grpc::CallbackServerContext* ctx,
                                                        const CleanupAllRequest* req,
                                                        CleanupAllResponse* /*resp*/) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  return Finished(ctx, worker_->CleanupAll(*req));
}

grpc::ServerUnaryReactor* GrpcWorkerService::RecvTensor(grpc::CallbackServerContext* ctx,
                                                        const grpc::ByteBuffer* req,
                                                        grpc::ByteBuffer* resp) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  auto request = std::make_shared<RecvTensorRequest>();
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (req->Dump(&slices).ok()) {
    for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  if (!request->ParseFromString(bytes)) {
    return Finished(ctx, errors::InvalidArgument("malformed RecvTensorRequest"));
  }
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  SideChannelServer* side = request->side_channel_ok() ? side_channel_ : nullptr;
  worker_->RecvTensorAsync(*request, [reactor, request, resp, side](
                                         const absl::Status& s, const Tensor& value, bool is_dead) {
    if (s.ok()) {
      std::optional<SideChannelTicket> ticket;
      if (side != nullptr && !is_dead) ticket = side->Offer(value);
      if (ticket.has_value()) {
        EncodeRecvTensorOffer(value, {*ticket, side->port(), value.TotalBytes()}, NowMicros(),
                              resp);
      } else {
        // The response points at the tensor's own buffer: no copy.
        EncodeRecvTensorResponse(value, is_dead, NowMicros(), resp);
      }
    }
    reactor->Finish(ToGrpcStatus(s));
  });
  return reactor;
}

grpc::ServerUnaryReactor* GrpcWorkerService::Logging(grpc::CallbackServerContext* ctx,
                                                     const LoggingRequest* /*req*/,
                                                     LoggingResponse* /*resp*/) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  return Finished(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* GrpcWorkerService::Tracing(grpc::CallbackServerContext* ctx,
                                                     const TracingRequest* /*req*/,
                                                     TracingResponse* /*resp*/) {
  if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
  return Finished(ctx, errors::Unimplemented("Tracing is not supported"));
}

}  // namespace distflow
