#include "distflow/distributed_runtime/rpc/grpc_master_service.h"

#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"

namespace distflow {
namespace {

using Done = ServerCallQueue::Done;

// A Master method: (request, response, callback).
template <class Req, class Resp>
using MasterMethod = void (Master::*)(const Req*, Resp*, Master::Done);

// Adds a method of the Master that takes no cancellation, run on `pool`.
template <class Req, class Resp>
void AddOnPool(ServerCallQueue* queue, ThreadPool* pool, Master* master, const std::string* token,
               ServerCallQueue::RequestFn<Req, Resp> request, MasterMethod<Req, Resp> method) {
  queue->Add<Req, Resp>(
      std::move(request),
      [master, token, method](grpc::ServerContext* ctx, const Req* req, Resp* resp,
                              CancellationManager* /*cm*/, Done done) {
        grpc::Status auth = CheckToken(ctx, *token);
        if (!auth.ok()) {
          done(auth);
          return;
        }
        (master->*method)(
            req, resp, [done = std::move(done)](const absl::Status& s) { done(ToGrpcStatus(s)); });
      },
      1, pool);
}

}  // namespace

void GrpcMasterService::ServeOn(ServerCallQueue* queue, ThreadPool* pool) {
  AddOnPool<CreateSessionRequest, CreateSessionResponse>(
      queue, pool, master_, &token_, [this](auto... args) { RequestCreateSession(args...); },
      &Master::CreateSession);
  AddOnPool<ExtendSessionRequest, ExtendSessionResponse>(
      queue, pool, master_, &token_, [this](auto... args) { RequestExtendSession(args...); },
      &Master::ExtendSession);
  AddOnPool<PartialRunSetupRequest, PartialRunSetupResponse>(
      queue, pool, master_, &token_, [this](auto... args) { RequestPartialRunSetup(args...); },
      &Master::PartialRunSetup);
  AddOnPool<CloseSessionRequest, CloseSessionResponse>(
      queue, pool, master_, &token_, [this](auto... args) { RequestCloseSession(args...); },
      &Master::CloseSession);
  AddOnPool<ListDevicesRequest, ListDevicesResponse>(
      queue, pool, master_, &token_, [this](auto... args) { RequestListDevices(args...); },
      &Master::ListDevices);
  AddOnPool<ResetRequest, ResetResponse>(
      queue, pool, master_, &token_, [this](auto... args) { RequestReset(args...); },
      &Master::Reset);
  AddOnPool<MakeCallableRequest, MakeCallableResponse>(
      queue, pool, master_, &token_, [this](auto... args) { RequestMakeCallable(args...); },
      &Master::MakeCallable);
  AddOnPool<ReleaseCallableRequest, ReleaseCallableResponse>(
      queue, pool, master_, &token_, [this](auto... args) { RequestReleaseCallable(args...); },
      &Master::ReleaseCallable);
  // A client that cancels or goes away cancels its step.
  queue->Add<RunStepRequest, RunStepResponse>(
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
  queue->Add<RunCallableRequest, RunCallableResponse>(
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
