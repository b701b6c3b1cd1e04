// Workers joining a running coordinator over gRPC (coordinator_service.proto).
//
// GrpcCoordinatorListener is the coordinator's side: a gRPC server on its
// own port whose RegisterWorker calls are handed to a callback (the
// coordinator's AddWorker). It checks the process token and serves TLS as
// the process's servers do (grpc_auth.h, grpc_tls.h), so a stranger cannot
// add a worker to a protected cluster. JoinCoordinator is the worker's
// side, retried until the coordinator answers or the deadline passes.
//
// The listener is thread-safe; the callback may run on several gRPC
// threads at once.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_COORDINATOR_SERVICE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_COORDINATOR_SERVICE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace distflow {

class GrpcCoordinatorListener {
 public:
  // Adds the worker task `task` of `job` at `address`; the number of
  // workers after it, or the reason it was refused.
  using RegisterFn =
      std::function<absl::StatusOr<int>(const std::string& job, int task, const std::string& address)>;

  // Listens on `address` ("host:port"; port 0 picks a free one).
  // Unavailable naming the address when it cannot bind.
  static absl::StatusOr<std::unique_ptr<GrpcCoordinatorListener>> Start(const std::string& address,
                                                                        RegisterFn on_register);
  // Stops listening; calls in progress get at most a second to finish.
  ~GrpcCoordinatorListener();
  GrpcCoordinatorListener(const GrpcCoordinatorListener&) = delete;
  GrpcCoordinatorListener& operator=(const GrpcCoordinatorListener&) = delete;

  int bound_port() const { return bound_port_; }

 private:
  GrpcCoordinatorListener() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int bound_port_ = 0;
};

// Registers worker `task` of `job`, answering at `address`, with the
// coordinator at `target` ("grpc://host:port" or "host:port"). Retries an
// unreachable coordinator until `timeout` has passed (then Unavailable);
// the coordinator's refusal (e.g. AlreadyExists for a task it has) is
// returned at once.
absl::Status JoinCoordinator(const std::string& target, const std::string& job, int task,
                             const std::string& address, absl::Duration timeout);

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_COORDINATOR_SERVICE_H_
