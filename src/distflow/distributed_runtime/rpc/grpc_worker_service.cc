#include "distflow/distributed_runtime/rpc/grpc_worker_service.h"

#include <memory>
#include <optional>
#include <vector>

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

void GrpcWorkerService::ServeOn(ServerCallQueues* queues) {
  using Done = ServerCallQueues::Done;
  queues->Add<GetStatusRequest, GetStatusResponse>(
      [this](auto... args) { RequestGetStatus(args...); },
      [this](grpc::ServerContext* ctx, const GetStatusRequest* req, GetStatusResponse* resp,
             CancellationManager* /*cm*/, Done done) {
        grpc::Status auth = CheckToken(ctx, token_);
        if (auth.ok()) worker_->GetStatus(*req, resp);
        done(auth);
      },
      1);
  queues->Add<RunGraphRequest, RunGraphResponse>(
      [this](auto... args) { RequestRunGraph(args...); },
      [this](grpc::ServerContext* ctx, const RunGraphRequest* req, RunGraphResponse* resp,
             CancellationManager* cm, Done done) {
        grpc::Status auth = CheckToken(ctx, token_);
        if (!auth.ok()) {
          done(auth);
          return;
        }
        worker_->RunGraphAsync(cm, req, resp, [done = std::move(done)](const absl::Status& s) {
          done(ToGrpcStatus(s));
        });
      });
  queues->Add<grpc::ByteBuffer, grpc::ByteBuffer>(
      [this](auto... args) { RequestRecvTensor(args...); },
      [this](grpc::ServerContext* ctx, const grpc::ByteBuffer* req, grpc::ByteBuffer* resp,
             CancellationManager* /*cm*/, Done done) {
        grpc::Status auth = CheckToken(ctx, token_);
        if (!auth.ok()) {
          done(auth);
          return;
        }
        auto request = std::make_shared<RecvTensorRequest>();
        std::vector<grpc::Slice> slices;
        std::string bytes;
        if (req->Dump(&slices).ok()) {
          for (const auto& s : slices) {
            bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
          }
        }
        if (!request->ParseFromString(bytes)) {
          done(ToGrpcStatus(errors::InvalidArgument("malformed RecvTensorRequest")));
          return;
        }
        SideChannelServer* side = request->side_channel_ok() ? side_channel_ : nullptr;
        worker_->RecvTensorAsync(
            *request, [request, resp, side, done = std::move(done)](
                          const absl::Status& s, const Tensor& value, bool is_dead) {
              if (s.ok()) {
                std::optional<SideChannelTicket> ticket;
                if (side != nullptr && !is_dead) ticket = side->Offer(value);
                if (ticket.has_value()) {
                  EncodeRecvTensorOffer(value, {*ticket, side->port(), value.TotalBytes()},
                                        NowMicros(), resp);
                } else {
                  // The response points at the tensor's own buffer: no copy.
                  EncodeRecvTensorResponse(value, is_dead, NowMicros(), resp);
                }
              }
              done(ToGrpcStatus(s));
            });
      },
      8);
}

}  // namespace distflow
