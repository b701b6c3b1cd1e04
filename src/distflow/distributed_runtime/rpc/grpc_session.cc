#include "distflow/distributed_runtime/rpc/grpc_session.h"

#include <unistd.h>

#include <chrono>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_tls.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "distflow/framework/tensor_proto.h"

namespace distflow {
namespace {

constexpr char kPrefix[] = "grpc://";

// Extra time the client gives the master beyond the step's own timeout, so
// the master's DeadlineExceeded (naming the step) arrives before ours.
constexpr int64_t kDeadlineSlackMs = 2000;
// The deadline of a call that may place and register graphs (CreateSession,
// ExtendSession, MakeCallable, PartialRunSetup) when the session's config
// sets no operation_timeout_in_ms.
constexpr int64_t kGraphCallDefaultMs = 60000;
// Likewise for the other control calls (ListDevices, CloseSession,
// ReleaseCallable).
constexpr int64_t kControlCallDefaultMs = 10000;
// A control call that fails with Unavailable (a master restarting) is
// repeated after kRetryFirstDelayMs, the delay doubling up to
// kRetryMaxDelayMs, until kRetryBudgetMs of delays have passed.
constexpr int64_t kRetryFirstDelayMs = 50;
constexpr int64_t kRetryMaxDelayMs = 1000;
constexpr int64_t kRetryBudgetMs = 5000;

void SetDeadline(grpc::ClientContext* ctx, int64_t timeout_ms) {
  if (timeout_ms > 0) {
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(timeout_ms + kDeadlineSlackMs));
  }
}

// Whether something at `address` ("host:port") accepts a TCP connection
// within kProbeTimeout.
bool AcceptsConnections(const std::string& address) {
  constexpr absl::Duration kProbeTimeout = absl::Milliseconds(500);
  std::string host, why;
  int port = 0;
  if (!SplitHostPort(address, &host, &port).ok()) return false;
  const int fd = ConnectTcp(host, port, absl::Now() + kProbeTimeout, &why);
  if (fd < 0) return false;
  close(fd);
  return true;
}

absl::Status MasterError(const std::string& address, const grpc::Status& s, bool ever_reached) {
  absl::Status status = FromGrpcStatus(s);
  if (status.code() != absl::StatusCode::kUnavailable || IsServerStatus(s)) return status;
  // A refused handshake looks like a peer that is down: when something
  // accepts connections there all the same, say which side of TLS this
  // client is on, so a mismatch is easy to spot. A server that went away
  // accepts nothing and gets no hint, nor does one this session reached
  // before (its TLS matched).
  std::string hint;
  if (!ever_reached && AcceptsConnections(address)) {
    absl::StatusOr<TlsConfig> tls = ProcessTls();
    hint = tls.ok() && tls->enabled()
               ? " (this client speaks TLS: a server without TLS, or one whose CA did not sign "
                 "this client's certificate, refuses it)"
               : " (this client speaks plaintext: a server started with --tls-cert refuses it)";
  }
  return errors::Unavailable("master at ", address, " is unreachable: ", status.message(), hint);
}

// Repeats `call` while it fails with Unavailable, backing off from
// kRetryFirstDelayMs up to kRetryMaxDelayMs, for at most kRetryBudgetMs of
// delays in all.
template <typename Fn>
absl::Status WithRetries(Fn&& call) {
  int64_t delay_ms = kRetryFirstDelayMs;
  int64_t waited = 0;
  for (;;) {
    absl::Status s = call();
    if (s.code() != absl::StatusCode::kUnavailable || waited >= kRetryBudgetMs) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    waited += delay_ms;
    delay_ms = std::min<int64_t>(delay_ms * 2, kRetryMaxDelayMs);
  }
}

}  // namespace

int64_t GrpcSession::ControlTimeoutMs(int64_t fallback_ms) const {
  const int64_t configured = options_.config.operation_timeout_in_ms();
  return configured > 0 ? configured : fallback_ms;
}

absl::StatusOr<std::unique_ptr<GrpcSession>> GrpcSession::Create(const SessionOptions& options) {
  if (!absl::StartsWith(options.target, kPrefix) || options.target.size() == sizeof(kPrefix) - 1) {
    return errors::InvalidArgument("target '", options.target, "' is not grpc://host:port");
  }
  std::string address = options.target.substr(sizeof(kPrefix) - 1);
  DF_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel, NewGrpcChannel(address));
  return std::unique_ptr<GrpcSession>(
      new GrpcSession(options, std::move(address), std::move(channel)));
}

GrpcSession::GrpcSession(SessionOptions options, std::string address,
                         std::shared_ptr<grpc::Channel> channel)
    : options_(std::move(options)),
      address_(std::move(address)),
      stub_(MasterService::NewStub(std::move(channel))),
      run_step_streams_([this](grpc::ClientContext* ctx) { return stub_->RunStepStream(ctx); }),
      run_callable_streams_(
          [this](grpc::ClientContext* ctx) { return stub_->RunCallableStream(ctx); }) {}

GrpcSession::~GrpcSession() { Close().IgnoreError(); }

absl::StatusOr<std::string> GrpcSession::Handle() {
  absl::MutexLock lock(&mu_);
  if (closed_) return SessionClosedError();
  if (handle_.empty()) return errors::FailedPrecondition("session has no graph: call Create first");
  return handle_;
}

absl::Status GrpcSession::Create(const GraphDef& graph) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return SessionClosedError();
    if (!handle_.empty()) return errors::FailedPrecondition("session already has a graph");
  }
  CreateSessionRequest req;
  *req.mutable_graph_def() = graph;
  *req.mutable_config() = options_.config;
  req.set_target(options_.target);
  CreateSessionResponse resp;
  DF_RETURN_IF_ERROR(WithRetries([&] {
    grpc::ClientContext ctx;
    SetDeadline(&ctx, ControlTimeoutMs(kGraphCallDefaultMs));
    return Check(stub_->CreateSession(&ctx, req, &resp));
  }));
  absl::MutexLock lock(&mu_);
  handle_ = resp.session_handle();
  graph_version_ = resp.graph_version();
  return absl::OkStatus();
}

absl::Status GrpcSession::Check(const grpc::Status& s) {
  // A status from the server itself (not the transport) also proves the
  // connection worked.
  if (s.ok() || IsServerStatus(s)) reached_.store(true, std::memory_order_relaxed);
  return MasterError(address_, s, reached_.load(std::memory_order_relaxed));
}

absl::Status GrpcSession::EnsureCreated() {
  {
    absl::MutexLock lock(&mu_);
    if (!handle_.empty()) return absl::OkStatus();
  }
  return Create(GraphDef());
}

absl::Status GrpcSession::Extend(const GraphDef& graph) {
  bool create;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return SessionClosedError();
    create = handle_.empty();
  }
  if (create) return Create(graph);
  ExtendSessionRequest req;
  {
    absl::MutexLock lock(&mu_);
    req.set_session_handle(handle_);
    req.set_current_graph_version(graph_version_);
  }
  *req.mutable_graph_def() = graph;
  ExtendSessionResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, ControlTimeoutMs(kGraphCallDefaultMs));
  DF_RETURN_IF_ERROR(Check(stub_->ExtendSession(&ctx, req, &resp)));
  absl::MutexLock lock(&mu_);
  graph_version_ = resp.new_graph_version();
  return absl::OkStatus();
}

absl::Status GrpcSession::Run(const RunOptions& run_options,
                              const std::vector<std::pair<std::string, Tensor>>& inputs,
                              const std::vector<std::string>& output_tensor_names,
                              const std::vector<std::string>& target_node_names,
                              std::vector<Tensor>* outputs, RunMetadata* run_metadata) {
  DF_ASSIGN_OR_RETURN(std::string handle, Handle());
  RunStepRequest req;
  req.set_session_handle(handle);
  for (const auto& [name, value] : inputs) {
    NamedTensorProto* feed = req.add_feed();
    feed->set_name(name);
    TensorToProto(value, feed->mutable_tensor());
  }
  for (const std::string& f : output_tensor_names) req.add_fetch(f);
  for (const std::string& t : target_node_names) req.add_target(t);
  *req.mutable_options() = run_options;
  int64_t timeout = run_options.timeout_in_ms();
  if (timeout <= 0) timeout = options_.config.operation_timeout_in_ms();
  if (timeout > 0) req.mutable_options()->set_timeout_in_ms(timeout);
  RunStepResponse resp;
  // The call's deadline is the step's, with the same slack a unary call's
  // context gets.
  const int64_t call_timeout = timeout > 0 ? timeout + kDeadlineSlackMs : 0;
  DF_RETURN_IF_ERROR(Check(run_step_streams_.Call(
      req, &resp, call_timeout,
      [this](grpc::ClientContext* ctx, bool running) { TrackRunning(ctx, running); })));
  if (resp.tensor_size() != static_cast<int>(output_tensor_names.size())) {
    return errors::Internal("master returned ", resp.tensor_size(), " tensors for ",
                            output_tensor_names.size(), " fetches");
  }
  // Callers that fetch nothing may pass no output vector.
  if (outputs != nullptr) {
    outputs->clear();
    for (const NamedTensorProto& t : resp.tensor()) {
      Tensor value;
      DF_RETURN_IF_ERROR(errors::Annotate(TensorFromProto(t.tensor(), &value),
                                          absl::StrCat("fetch '", t.name(), "': ")));
      outputs->push_back(std::move(value));
    }
  } else if (resp.tensor_size() > 0) {
    return errors::InvalidArgument("Run fetched ", resp.tensor_size(),
                                   " tensors but was given no output vector");
  }
  if (run_metadata != nullptr) *run_metadata = resp.metadata();
  return absl::OkStatus();
}

absl::Status GrpcSession::ListDevices(std::vector<DeviceAttributes>* response) {
  ListDevicesRequest req;
  {
    absl::MutexLock lock(&mu_);
    req.set_session_handle(handle_);
  }
  ListDevicesResponse resp;
  DF_RETURN_IF_ERROR(WithRetries([&] {
    grpc::ClientContext ctx;
    SetDeadline(&ctx, ControlTimeoutMs(kControlCallDefaultMs));
    return Check(stub_->ListDevices(&ctx, req, &resp));
  }));
  response->clear();
  for (const auto& d : resp.local_device()) response->push_back(d);
  for (const auto& d : resp.remote_device()) response->push_back(d);
  return absl::OkStatus();
}

void GrpcSession::TrackRunning(grpc::ClientContext* ctx, bool running) {
  absl::MutexLock l(&mu_);
  if (running) {
    running_.insert(ctx);
  } else {
    running_.erase(ctx);
  }
}

absl::Status GrpcSession::CancelRunningSteps() {
  absl::MutexLock l(&mu_);
  for (grpc::ClientContext* ctx : running_) ctx->TryCancel();
  return absl::OkStatus();
}

absl::Status GrpcSession::Close() {
  std::string handle;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    handle = handle_;
  }
  if (handle.empty()) return absl::OkStatus();
  CloseSessionRequest req;
  req.set_session_handle(handle);
  CloseSessionResponse resp;
  return WithRetries([&] {
    grpc::ClientContext ctx;
    SetDeadline(&ctx, ControlTimeoutMs(kControlCallDefaultMs));
    return Check(stub_->CloseSession(&ctx, req, &resp));
  });
}

absl::Status GrpcSession::MakeCallable(const CallableOptions& options, CallableHandle* handle) {
  DF_RETURN_IF_ERROR(EnsureCreated());
  DF_ASSIGN_OR_RETURN(std::string session, Handle());
  MakeCallableRequest req;
  req.set_session_handle(session);
  *req.mutable_options() = options;
  MakeCallableResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, ControlTimeoutMs(kGraphCallDefaultMs));
  DF_RETURN_IF_ERROR(Check(stub_->MakeCallable(&ctx, req, &resp)));
  *handle = resp.handle();
  return absl::OkStatus();
}

absl::Status GrpcSession::RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                                      std::vector<Tensor>* outputs, RunMetadata* run_metadata) {
  DF_ASSIGN_OR_RETURN(std::string session, Handle());
  RunCallableRequest req;
  req.set_session_handle(session);
  req.set_handle(handle);
  for (const Tensor& t : feeds) TensorToProto(t, req.add_feed());
  RunCallableResponse resp;
  const int64_t timeout = options_.config.operation_timeout_in_ms();
  DF_RETURN_IF_ERROR(Check(run_callable_streams_.Call(
      req, &resp, timeout > 0 ? timeout + kDeadlineSlackMs : 0,
      [this](grpc::ClientContext* ctx, bool running) { TrackRunning(ctx, running); })));
  outputs->clear();
  for (const TensorProto& p : resp.fetch()) {
    Tensor value;
    DF_RETURN_IF_ERROR(TensorFromProto(p, &value));
    outputs->push_back(std::move(value));
  }
  if (run_metadata != nullptr) *run_metadata = resp.metadata();
  return absl::OkStatus();
}

absl::Status GrpcSession::ReleaseCallable(CallableHandle handle) {
  DF_ASSIGN_OR_RETURN(std::string session, Handle());
  ReleaseCallableRequest req;
  req.set_session_handle(session);
  req.set_handle(handle);
  ReleaseCallableResponse resp;
  return WithRetries([&] {
    grpc::ClientContext ctx;
    SetDeadline(&ctx, ControlTimeoutMs(kControlCallDefaultMs));
    return Check(stub_->ReleaseCallable(&ctx, req, &resp));
  });
}

absl::Status GrpcSession::PRunSetup(const std::vector<std::string>& input_names,
                                    const std::vector<std::string>& output_names,
                                    const std::vector<std::string>& target_nodes,
                                    std::string* handle) {
  DF_ASSIGN_OR_RETURN(std::string session, Handle());
  PartialRunSetupRequest req;
  req.set_session_handle(session);
  for (const auto& n : input_names) req.add_feed(n);
  for (const auto& n : output_names) req.add_fetch(n);
  for (const auto& n : target_nodes) req.add_target(n);
  PartialRunSetupResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, ControlTimeoutMs(kGraphCallDefaultMs));
  DF_RETURN_IF_ERROR(Check(stub_->PartialRunSetup(&ctx, req, &resp)));
  *handle = resp.partial_run_handle();
  return absl::OkStatus();
}

absl::Status GrpcSession::PRun(const std::string& handle,
                               const std::vector<std::pair<std::string, Tensor>>& inputs,
                               const std::vector<std::string>& output_names,
                               std::vector<Tensor>* outputs) {
  DF_ASSIGN_OR_RETURN(std::string session, Handle());
  RunStepRequest req;
  req.set_session_handle(session);
  req.set_partial_run_handle(handle);
  for (const auto& [name, value] : inputs) {
    NamedTensorProto* feed = req.add_feed();
    feed->set_name(name);
    TensorToProto(value, feed->mutable_tensor());
  }
  for (const std::string& f : output_names) req.add_fetch(f);
  const int64_t timeout = options_.config.operation_timeout_in_ms();
  if (timeout > 0) req.mutable_options()->set_timeout_in_ms(timeout);
  RunStepResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, timeout);
  DF_RETURN_IF_ERROR(Check(stub_->RunStep(&ctx, req, &resp)));
  outputs->clear();
  for (const NamedTensorProto& t : resp.tensor()) {
    Tensor value;
    DF_RETURN_IF_ERROR(TensorFromProto(t.tensor(), &value));
    outputs->push_back(std::move(value));
  }
  return absl::OkStatus();
}

void RegisterGrpcSessionFactory() {
  static const bool registered = [] {
    RegisterSessionFactory(
        kPrefix, [](const SessionOptions& options) -> absl::StatusOr<std::unique_ptr<Session>> {
          DF_ASSIGN_OR_RETURN(std::unique_ptr<GrpcSession> s, GrpcSession::Create(options));
          return std::unique_ptr<Session>(std::move(s));
        });
    return true;
  }();
  (void)registered;
}

namespace {
[[maybe_unused]] const bool kRegistered = (RegisterGrpcSessionFactory(), true);
}  // namespace

}  // namespace distflow
