#include "distflow/distributed_runtime/rpc/grpc_master_service.h"

#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_call_stream.h"
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

// A Master method that a caller's going away cancels: (request, response,
// the call's CancellationManager, callback).
template <class Req, class Resp>
using CancellableMethod = void (Master::*)(const Req*, Resp*, CancellationManager*, Master::Done);

// The handler of a Master method that takes the call's cancellation.
template <class Req, class Resp>
ServerCallQueue::Handler<Req, Resp> CancellableHandler(Master* master, const std::string* token,
                                                       CancellableMethod<Req, Resp> method) {
  return [master, token, method](grpc::ServerContext* ctx, const Req* req, Resp* resp,
                                 CancellationManager* cm, Done done) {
    grpc::Status auth = CheckToken(ctx, *token);
    if (!auth.ok()) {
      done(auth);
      return;
    }
    (master->*method)(req, resp, cm,
                      [done = std::move(done)](const absl::Status& s) { done(ToGrpcStatus(s)); });
  };
}

// Adds a method of the Master that takes the call's cancellation, run on
// `pool` when given.
template <class Req, class Resp>
void AddCancellable(ServerCallQueue* queue, ThreadPool* pool, Master* master,
                    const std::string* token, ServerCallQueue::RequestFn<Req, Resp> request,
                    CancellableMethod<Req, Resp> method) {
  queue->Add<Req, Resp>(std::move(request), CancellableHandler(master, token, method),
                        pool != nullptr ? 1 : 4, pool);
}

}  // namespace

void GrpcMasterService::ServeOn(ServerCallQueue* queue, ThreadPool* pool) {
  // A client that cancels or goes away cancels the session's setup, or its
  // step.
  AddCancellable<CreateSessionRequest, CreateSessionResponse>(
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
  AddCancellable<RunStepRequest, RunStepResponse>(
      queue, nullptr, master_, &token_, [this](auto... args) { RequestRunStep(args...); },
      &Master::RunStep);
  StreamMethod<RunStepStreamRequest, RunStepStreamResponse>::AddTo(
      queue, [this](auto... args) { RequestRunStepStream(args...); },
      CancellableHandler<RunStepRequest, RunStepResponse>(master_, &token_, &Master::RunStep),
      "RunStep");
  AddCancellable<RunCallableRequest, RunCallableResponse>(
      queue, nullptr, master_, &token_, [this](auto... args) { RequestRunCallable(args...); },
      &Master::RunCallable);
  StreamMethod<RunCallableStreamRequest, RunCallableStreamResponse>::AddTo(
      queue, [this](auto... args) { RequestRunCallableStream(args...); },
      CancellableHandler<RunCallableRequest, RunCallableResponse>(master_, &token_,
                                                                  &Master::RunCallable),
      "RunCallable");
}

}  // namespace distflow
