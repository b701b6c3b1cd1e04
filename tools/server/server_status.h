// What `distflow server --status-port P` serves about the running server: a
// live page (/), the same data as JSON (/api/status) and Prometheus metrics
// (/metrics): sessions on its master, graphs registered on its worker,
// steps whose rendezvous it holds, side-channel transfers, memory against
// the budget, and per RPC method the calls, errors and latency. Everything
// is read from the server at each request.
//
// Thread-safe. Destroy it (which stops its HTTP server) before the
// GrpcServer it reads.
#ifndef DISTFLOW_TOOLS_SERVER_SERVER_STATUS_H_
#define DISTFLOW_TOOLS_SERVER_SERVER_STATUS_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "distflow/distributed_runtime/rpc/grpc_server.h"
#include "distflow/monitoring/status_server.h"
#include "nlohmann/json.hpp"

namespace distflow {

class ServerStatus {
 public:
  // `server` must outlive this object.
  explicit ServerStatus(const GrpcServer* server);

  // Starts serving on `options`' address; the status server's errors.
  absl::Status Serve(const StatusServerOptions& options);
  int port() const { return http_ == nullptr ? 0 : http_->port(); }

  nlohmann::ordered_json Json() const;
  std::string Metrics() const;

 private:
  double Uptime() const;

  const GrpcServer* const server_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::unique_ptr<StatusServer> http_;
};

}  // namespace distflow

#endif  // DISTFLOW_TOOLS_SERVER_SERVER_STATUS_H_
