// Glue between absl::Status and grpc::Status, and the channel settings every
// distflow connection uses (no message size limit below 2 GiB, so tensors
// up to 2 GiB move).
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_UTIL_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_UTIL_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace distflow {

// Codes map one to one (both follow the canonical code numbers). Statuses
// made by ToGrpcStatus are marked, so a client can tell an error a distflow
// server returned from a failure of the transport itself.
grpc::Status ToGrpcStatus(const absl::Status& s);
absl::Status FromGrpcStatus(const grpc::Status& s);
// True iff `s` was produced by a distflow server (not by the transport).
bool IsServerStatus(const grpc::Status& s);

// The largest message a channel or server accepts: INT32_MAX bytes.
inline constexpr int kMaxMessageBytes = 0x7fffffff;

// Keepalive period of every channel while calls are in flight; servers
// accept pings this often.
inline constexpr int kKeepaliveMs = 5000;
// A server closes a connection that has not completed its handshake (TLS,
// HTTP/2 preface and settings) within this long (gRPC's default is 120 s):
// a flood of silent connections holds its descriptors no longer.
inline constexpr int kServerHandshakeTimeoutMs = 10000;

grpc::ChannelArguments DistflowChannelArguments();
// Server settings matching DistflowChannelArguments (message size, pings),
// and the handshake timeout.
void ConfigureServerBuilder(grpc::ServerBuilder* builder);
// A channel to "host:port" with DistflowChannelArguments(), over the
// process's TLS settings (grpc_tls.h) and carrying the process token
// (grpc_auth.h) when there is one, as they are when the channel is made.
// The error of bad DISTFLOW_TLS_* settings.
absl::StatusOr<std::shared_ptr<grpc::Channel>> NewGrpcChannel(const std::string& address);

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_UTIL_H_
