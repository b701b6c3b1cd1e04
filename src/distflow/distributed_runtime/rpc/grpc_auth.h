// Shared-token authentication of every master and worker RPC. A cluster
// started with a token (`distflow server --token-file F`, or the file named
// by DISTFLOW_TOKEN_FILE) answers only calls that carry it in the
// "x-distflow-token" metadata, and its own channels — to other tasks, and a
// client session's to its master — carry the process's token. Without a
// token nothing is checked. The token proves membership, not identity, and
// travels in clear text: on an untrusted network use it over a network the
// cluster owns (TLS is the stronger mode).
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_AUTH_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_AUTH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/client_interceptor.h"

namespace distflow {

inline constexpr char kTokenMetadataKey[] = "x-distflow-token";

// The token in `path`: its content less surrounding whitespace.
// InvalidArgument naming the file when it is empty, longer than 4 KiB, or
// holds characters a metadata value cannot carry; the read error otherwise.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// The token this process's channels carry: the one set with
// SetProcessToken, else the one in DISTFLOW_TOKEN_FILE's file (read once;
// a bad file is reported on stderr and no token is sent), else none.
std::string ProcessToken();
void SetProcessToken(std::string token);

// OK when `expected` is empty or the call carries it; Unauthenticated
// otherwise. Compares in time independent of where the tokens differ.
grpc::Status CheckToken(const grpc::ServerContextBase* ctx, const std::string& expected);

// For service methods: when the call fails CheckToken, finishes it with
// that status and returns its reactor; nullptr when the call may go on.
grpc::ServerUnaryReactor* RejectUnauthenticated(grpc::CallbackServerContext* ctx,
                                                const std::string& expected);

// Interceptors that add the process token (when there is one) to every call
// of a channel.
std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
TokenInterceptors();

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_AUTH_H_
