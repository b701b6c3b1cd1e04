// Glue between absl::Status and grpc::Status, and the channel settings every
// distflow connection uses (no message size limit below 2 GiB, so tensors
// up to 2 GiB move).
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_UTIL_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_UTIL_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "grpcpp/grpcpp.h"

namespace distflow {

// Codes map one to one (both follow the canonical code numbers).
grpc::Status ToGrpcStatus(const absl::Status& s);
absl::Status FromGrpcStatus(const grpc::Status& s);

// The largest message a channel or server accepts: INT32_MAX bytes.
inline constexpr int kMaxMessageBytes = 0x7fffffff;

grpc::ChannelArguments DistflowChannelArguments();
// An insecure channel to "host:port" with DistflowChannelArguments().
std::shared_ptr<grpc::Channel> NewGrpcChannel(const std::string& address);

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_UTIL_H_
