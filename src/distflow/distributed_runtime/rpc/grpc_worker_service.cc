#include "distflow/distributed_runtime/rpc/grpc_worker_service.h"

#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/env.h"
#include "distflow/core/memory_budget.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_call_stream.h"
#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "distflow/distributed_runtime/transfer_stats.h"
#include "distflow/framework/rendezvous.h"
#include "distflow/framework/tensor_proto.h"

namespace distflow {
namespace {

using Done = ServerCallQueue::Done;

// Adds a method whose Worker call is synchronous, run on `pool`.
template <class Req, class Resp>
void AddSync(ServerCallQueue* queue, ThreadPool* pool, const std::string* token,
             ServerCallQueue::RequestFn<Req, Resp> request,
             std::function<absl::Status(const Req&, Resp*)> call) {
  queue->Add<Req, Resp>(
      std::move(request),
      [token, call = std::move(call)](grpc::ServerContext* ctx, const Req* req, Resp* resp,
                                      CancellationManager* /*cm*/, Done done) {
        grpc::Status auth = CheckToken(ctx, *token);
        done(auth.ok() ? ToGrpcStatus(call(*req, resp)) : auth);
      },
      1, pool);
}

}  // namespace

void AnswerRecvTensor(Worker* worker, SideChannelServer* side_channel, CancellationManager* cm,
                      std::shared_ptr<const RecvTensorRequest> request, bool keyed,
                      RecvTensorReplyDone done) {
  SideChannelServer* side = request->side_channel_ok() ? side_channel : nullptr;
  worker->RecvTensorAsync(
      cm, *request,
      [request, side, keyed, done = std::move(done)](const absl::Status& s, const Tensor& value,
                                                     bool is_dead) {
        if (!s.ok()) {
          done(s, grpc::ByteBuffer(), Tensor());
          return;
        }
        // The peer is the receiving device's task.
        Rendezvous::ParsedKey parsed;
        const std::string peer = Rendezvous::ParseKey(request->rendezvous_key(), &parsed).ok()
                                     ? TaskOfDevice(parsed.dst_device)
                                     : std::string("unknown");
        std::optional<SideChannelTicket> ticket;
        if (!keyed && side != nullptr && !is_dead) ticket = side->Offer(value);
        const bool follows = keyed && !is_dead && !IsRefType(value.dtype()) &&
                             DataTypeSize(value.dtype()) > 0 &&
                             value.TotalBytes() >= kSideChannelFollowBytes;
        CountTensorTransfer(
            true,
            keyed || ticket.has_value() ? TensorTransport::kSideChannel : TensorTransport::kGrpc,
            peer, static_cast<int64_t>(value.TotalBytes()));
        grpc::ByteBuffer reply;
        if (ticket.has_value() || follows) {
          SideChannelOffer offer;
          offer.payload_bytes = value.TotalBytes();
          if (follows) {
            offer.follows = true;
          } else {
            offer.ticket = *ticket;
            offer.port = side->port();
          }
          EncodeRecvTensorOffer(value, offer, NowMicros(), &reply);
          done(absl::OkStatus(), std::move(reply), follows ? value : Tensor());
          return;
        }
        if (value.dtype() == DT_STRING && !is_dead) {
          // Strings are copied into a proto, then into its encoding.
          int64_t bytes = 0;
          if (!MultiplyWithoutOverflow<int64_t>(ProtoBytes(value), 2, &bytes)) bytes = INT64_MAX;
          auto charge = memory_budget::Reservation::Make(
              bytes, absl::StrCat("encoding the strings of '", request->rendezvous_key(), "' ",
                                  value.shape().DebugString()));
          if (!charge.ok()) {
            done(charge.status(), grpc::ByteBuffer(), Tensor());
            return;
          }
        }
        // Other tensors' replies point at their own buffers: no copy. A
        // gRPC reply names the side channel's port for keyed receives.
        EncodeRecvTensorResponse(value, is_dead, NowMicros(), &reply,
                                 side != nullptr && !keyed ? side->port() : 0);
        done(absl::OkStatus(), std::move(reply), Tensor());
      });
}

void GrpcWorkerService::ServeOn(ServerCallQueue* queue, ThreadPool* pool) {
  Worker* worker = worker_;
  AddSync<CreateWorkerSessionRequest, CreateWorkerSessionResponse>(
      queue, pool, &token_, [this](auto... args) { RequestCreateWorkerSession(args...); },
      [worker](const CreateWorkerSessionRequest& req, CreateWorkerSessionResponse*) {
        return worker->CreateWorkerSession(req);
      });
  AddSync<DeleteWorkerSessionRequest, DeleteWorkerSessionResponse>(
      queue, pool, &token_, [this](auto... args) { RequestDeleteWorkerSession(args...); },
      [worker](const DeleteWorkerSessionRequest& req, DeleteWorkerSessionResponse*) {
        return worker->DeleteWorkerSession(req);
      });
  AddSync<RegisterGraphRequest, RegisterGraphResponse>(
      queue, pool, &token_, [this](auto... args) { RequestRegisterGraph(args...); },
      [worker](const RegisterGraphRequest& req, RegisterGraphResponse* resp) {
        return worker->RegisterGraph(req, resp);
      });
  AddSync<DeregisterGraphRequest, DeregisterGraphResponse>(
      queue, pool, &token_, [this](auto... args) { RequestDeregisterGraph(args...); },
      [worker](const DeregisterGraphRequest& req, DeregisterGraphResponse*) {
        return worker->DeregisterGraph(req);
      });
  AddSync<CleanupGraphRequest, CleanupGraphResponse>(
      queue, pool, &token_, [this](auto... args) { RequestCleanupGraph(args...); },
      [worker](const CleanupGraphRequest& req, CleanupGraphResponse*) {
        return worker->CleanupGraph(req);
      });
  AddSync<CleanupAllRequest, CleanupAllResponse>(
      queue, pool, &token_, [this](auto... args) { RequestCleanupAll(args...); },
      [worker](const CleanupAllRequest& req, CleanupAllResponse*) {
        return worker->CleanupAll(req);
      });
  AddSync<LoggingRequest, LoggingResponse>(
      queue, pool, &token_, [this](auto... args) { RequestLogging(args...); },
      [](const LoggingRequest&, LoggingResponse*) { return absl::OkStatus(); });
  AddSync<TracingRequest, TracingResponse>(
      queue, pool, &token_, [this](auto... args) { RequestTracing(args...); },
      [](const TracingRequest&, TracingResponse*) {
        return errors::Unimplemented("Tracing is not supported");
      });
  queue->Add<GetStatusRequest, GetStatusResponse>(
      [this](auto... args) { RequestGetStatus(args...); },
      [this](grpc::ServerContext* ctx, const GetStatusRequest* req, GetStatusResponse* resp,
             CancellationManager* /*cm*/, Done done) {
        grpc::Status auth = CheckToken(ctx, token_);
        if (auth.ok()) worker_->GetStatus(*req, resp);
        done(auth);
      },
      1);
  ServerCallQueue::Handler<RunGraphRequest, RunGraphResponse> run_graph =
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
      };
  queue->Add<RunGraphRequest, RunGraphResponse>([this](auto... args) { RequestRunGraph(args...); },
                                                run_graph);
  StreamMethod<RunGraphStreamRequest, RunGraphStreamResponse>::AddTo(
      queue, [this](auto... args) { RequestRunGraphStream(args...); }, run_graph, "RunGraph");
  queue->Add<grpc::ByteBuffer, grpc::ByteBuffer>(
      [this](auto... args) { RequestRecvTensor(args...); },
      [this](grpc::ServerContext* ctx, const grpc::ByteBuffer* req, grpc::ByteBuffer* resp,
             CancellationManager* cm, Done done) {
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
        AnswerRecvTensor(
            worker_, side_channel_, cm, std::move(request), /*keyed=*/false,
            [resp, done = std::move(done)](const absl::Status& s, grpc::ByteBuffer reply, Tensor) {
              if (s.ok()) resp->Swap(&reply);
              done(ToGrpcStatus(s));
            });
      },
      8, nullptr, "RecvTensor");
  StreamMethod<RecvTensorStreamRequest, RecvTensorStreamResponse>::AddTo(
      queue, [this](auto... args) { RequestRecvTensorStream(args...); },
      [this](grpc::ServerContext* ctx, const RecvTensorRequest* req, std::string* resp,
             CancellationManager* cm, Done done) {
        grpc::Status auth = CheckToken(ctx, token_);
        if (!auth.ok()) {
          done(auth);
          return;
        }
        AnswerRecvTensor(
            worker_, side_channel_, cm, std::make_shared<RecvTensorRequest>(*req),
            /*keyed=*/false,
            [resp, done = std::move(done)](const absl::Status& s, grpc::ByteBuffer reply, Tensor) {
              std::vector<grpc::Slice> slices;
              if (s.ok() && reply.Dump(&slices).ok()) {
                resp->reserve(reply.Length());
                for (const grpc::Slice& slice : slices) {
                  resp->append(reinterpret_cast<const char*>(slice.begin()), slice.size());
                }
              }
              done(ToGrpcStatus(s));
            });
      },
      "RecvTensor");
}

}  // namespace distflow
