#include "distflow/distributed_runtime/rpc/grpc_coordinator_service.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "distflow/coordinator_service.grpc.pb.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_tls.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "grpcpp/grpcpp.h"

namespace distflow {
namespace {

// A joining task's address is at most this long (a host name and a port).
constexpr size_t kMaxAddressBytes = 512;
// Each RegisterWorker call of a joining task; JoinCoordinator repeats it
// until its own timeout (`distflow server --join`: 60 s).
constexpr absl::Duration kCallTimeout = absl::Seconds(10);
// Between those calls: kJoinFirstRetryDelay, doubling up to
// kJoinMaxRetryDelay.
constexpr absl::Duration kJoinFirstRetryDelay = absl::Milliseconds(100);
constexpr absl::Duration kJoinMaxRetryDelay = absl::Seconds(2);
// How long a RegisterWorker call in flight may take to finish when the
// listener closes.
constexpr absl::Duration kListenerStopGrace = absl::Seconds(1);

class CoordinatorServiceImpl final : public CoordinatorService::CallbackService {
 public:
  CoordinatorServiceImpl(GrpcCoordinatorListener::RegisterFn on_register, std::string token)
      : on_register_(std::move(on_register)), token_(std::move(token)) {}

  grpc::ServerUnaryReactor* RegisterWorker(grpc::CallbackServerContext* ctx,
                                           const RegisterWorkerRequest* req,
                                           RegisterWorkerResponse* resp) override {
    if (grpc::ServerUnaryReactor* r = RejectUnauthenticated(ctx, token_)) return r;
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(ToGrpcStatus(Register(*req, resp)));
    return reactor;
  }

 private:
  absl::Status Register(const RegisterWorkerRequest& req, RegisterWorkerResponse* resp) {
    if (req.task_index() < 0) {
      return errors::InvalidArgument("RegisterWorker: task index ", req.task_index(),
                                     " is negative");
    }
    if (req.address().empty() || req.address().size() > kMaxAddressBytes ||
        !absl::StrContains(req.address(), ':')) {
      return errors::InvalidArgument("RegisterWorker: address must be host:port, got '",
                                     req.address().substr(0, 64), "'");
    }
    absl::StatusOr<int> workers = on_register_(req.job_name(), req.task_index(), req.address());
    if (!workers.ok()) return workers.status();
    resp->set_num_workers(*workers);
    return absl::OkStatus();
  }

  GrpcCoordinatorListener::RegisterFn on_register_;
  std::string token_;
};

}  // namespace

struct GrpcCoordinatorListener::Impl {
  std::unique_ptr<CoordinatorServiceImpl> service;
  std::unique_ptr<grpc::Server> server;
};

absl::StatusOr<std::unique_ptr<GrpcCoordinatorListener>> GrpcCoordinatorListener::Start(
    const std::string& address, RegisterFn on_register) {
  DF_ASSIGN_OR_RETURN(TlsConfig tls, ProcessTls());
  std::unique_ptr<GrpcCoordinatorListener> listener(new GrpcCoordinatorListener);
  listener->impl_ = std::make_unique<Impl>();
  listener->impl_->service =
      std::make_unique<CoordinatorServiceImpl>(std::move(on_register), ProcessToken());
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, ServerCredentials(tls), &listener->bound_port_);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  ConfigureServerBuilder(&builder);
  builder.SetMaxReceiveMessageSize(64 << 10);
  builder.RegisterService(listener->impl_->service.get());
  listener->impl_->server = builder.BuildAndStart();
  if (listener->impl_->server == nullptr || listener->bound_port_ == 0) {
    return errors::Unavailable("the coordinator cannot listen for workers on ", address,
                               " (is the port taken, or the host not an address of this "
                               "machine?)");
  }
  return listener;
}

GrpcCoordinatorListener::~GrpcCoordinatorListener() {
  if (impl_ != nullptr && impl_->server != nullptr) {
    impl_->server->Shutdown(absl::ToChronoTime(absl::Now() + kListenerStopGrace));
  }
}

absl::Status JoinCoordinator(const std::string& target, const std::string& job, int task,
                             const std::string& address, absl::Duration timeout) {
  const std::string where(absl::StripPrefix(target, "grpc://"));
  DF_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel, NewGrpcChannel(where));
  std::unique_ptr<CoordinatorService::Stub> stub = CoordinatorService::NewStub(channel);
  RegisterWorkerRequest req;
  req.set_job_name(job);
  req.set_task_index(task);
  req.set_address(address);
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration backoff = kJoinFirstRetryDelay;
  absl::Status last;
  while (true) {
    grpc::ClientContext ctx;
    const absl::Duration call = std::min(kCallTimeout, deadline - absl::Now());
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(std::max<int64_t>(
                                                            1, absl::ToInt64Milliseconds(call))));
    RegisterWorkerResponse resp;
    last = FromGrpcStatus(stub->RegisterWorker(&ctx, req, &resp));
    if (last.ok()) return absl::OkStatus();
    const bool retry = last.code() == absl::StatusCode::kUnavailable ||
                       last.code() == absl::StatusCode::kDeadlineExceeded;
    if (!retry) {
      return errors::Annotate(
          last, absl::StrCat("the coordinator at ", where, " refused worker task ", task, ": "));
    }
    if (absl::Now() + backoff >= deadline) break;
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(backoff));
    backoff = std::min(backoff * 2, kJoinMaxRetryDelay);
  }
  return errors::Unavailable("could not join the coordinator at ", where, " within ",
                             absl::FormatDuration(timeout), ": ", last.message());
}

}  // namespace distflow
