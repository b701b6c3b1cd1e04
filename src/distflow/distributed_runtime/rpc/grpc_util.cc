#include "distflow/distributed_runtime/rpc/grpc_util.h"

#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_tls.h"

namespace distflow {

namespace {
// error_details of a status a distflow server returned; a derived error
// (errors::IsDerived) carries the longer form.
constexpr char kServerMark[] = "distflow";
constexpr char kDerivedServerMark[] = "distflow;derived";
// A channel that lost its peer tries again after kFirstReconnectBackoffMs,
// the wait growing to kMaxReconnectBackoffMs: a restarted peer is found
// within a second, not after gRPC's minutes of backoff.
constexpr int kFirstReconnectBackoffMs = 100;
constexpr int kMaxReconnectBackoffMs = 1000;
// How long one connection attempt (TCP connect and HTTP/2 handshake) may
// take; gRPC reads it from GRPC_ARG_MIN_RECONNECT_BACKOFF_MS.
constexpr int kConnectAttemptMs = 5000;
}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()),
                      errors::IsDerived(s) ? kDerivedServerMark : kServerMark);
}

bool IsServerStatus(const grpc::Status& s) {
  return s.error_details() == kServerMark || s.error_details() == kDerivedServerMark;
}

absl::Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  absl::Status out(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  return s.error_details() == kDerivedServerMark ? errors::MakeDerived(out) : out;
}

grpc::ChannelArguments DistflowChannelArguments() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  // Reconnect quickly to a restarted peer instead of backing off for minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kFirstReconnectBackoffMs);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
  // gRPC reads this one as the time a connection attempt (TCP connect and
  // HTTP/2 handshake) gets. A refused connect fails at once whatever it is;
  // 100 ms, as it was, failed first calls to a server whose one polling
  // thread was busy for longer than that (grpc_call_queue.h).
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kConnectAttemptMs);
  // Each channel gets its own connection, so one peer's traffic does not
  // queue behind another's on a shared subchannel.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // While calls are in flight, ping the peer every kKeepaliveMs: a peer
  // that stops answering (a frozen process, a dead host) fails its calls
  // with Unavailable within three periods instead of leaving them waiting.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2 * kKeepaliveMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  return args;
}

void ConfigureServerBuilder(grpc::ServerBuilder* builder) {
  builder->SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder->SetMaxSendMessageSize(kMaxMessageBytes);
  // Clients ping while calls are in flight (DistflowChannelArguments): never
  // count those pings as abuse.
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                              kKeepaliveMs / 2);
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2 * kKeepaliveMs);
  builder->AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, kServerHandshakeTimeoutMs);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> NewGrpcChannel(const std::string& address) {
  DF_ASSIGN_OR_RETURN(TlsConfig tls, ProcessTls());
  std::shared_ptr<grpc::ChannelCredentials> credentials = ChannelCredentials(tls);
  // Interceptors only where there is a token to carry: without one a
  // channel takes gRPC's plain path.
  if (ProcessToken().empty()) {
    return grpc::CreateCustomChannel(address, credentials, DistflowChannelArguments());
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      address, credentials, DistflowChannelArguments(), TokenInterceptors());
}

}  // namespace distflow
