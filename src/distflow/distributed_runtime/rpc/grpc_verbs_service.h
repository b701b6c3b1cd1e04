// The gRPC side of the verbs transport: the VerbsService a grpc+verbs
// server hosts (GetRemoteAddress, the start-up exchange of a channel,
// served by the task's RdmaMgr and authenticated like every worker call),
// and the client call a channel's start-up makes. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_VERBS_SERVICE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_VERBS_SERVICE_H_

#include <memory>
#include <string>

#include "distflow/distributed_runtime/verbs/rdma_mgr.h"
#include "distflow/verbs_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace distflow {

class GrpcVerbsService final : public VerbsService::CallbackService {
 public:
  // `mgr` must outlive the service; calls must carry `token` when nonempty.
  GrpcVerbsService(RdmaMgr* mgr, std::string token) : mgr_(mgr), token_(std::move(token)) {}

  grpc::ServerUnaryReactor* GetRemoteAddress(grpc::CallbackServerContext* ctx,
                                             const GetRemoteAddressRequest* req,
                                             GetRemoteAddressResponse* resp) override;

 private:
  RdmaMgr* const mgr_;
  const std::string token_;
};

// GetRemoteAddress to the task served on `channel`, blocking until the
// answer or the deadline.
RemoteAddressExchange GrpcRemoteAddressExchange(std::shared_ptr<grpc::Channel> channel);

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_VERBS_SERVICE_H_
