// The client side of one remote worker's WorkerService. Every call is
// asynchronous: it returns at once and runs `done` on a gRPC thread when the
// reply (or an error) arrives. `call_opts` carries the deadline and lets the
// caller cancel an in-flight call. Transport failures come back as
// Unavailable naming the worker's task. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_CLIENT_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/framework/tensor.h"
#include "distflow/worker.pb.h"
#include "distflow/worker_service.grpc.pb.h"
#include "grpcpp/generic/generic_stub.h"

namespace distflow {

// Per-call options: a deadline and a cancellation hook. StartCancel may be
// called from any thread, before, during or after the call.
class CallOptions {
 public:
  CallOptions() = default;
  CallOptions(const CallOptions&) = delete;
  CallOptions& operator=(const CallOptions&) = delete;

  // 0 means no deadline.
  void set_timeout_ms(int64_t ms) { timeout_ms_ = ms; }
  int64_t timeout_ms() const { return timeout_ms_; }

  // Cancels the call (now, or as soon as it starts).
  void StartCancel();
  // Used by the client: attaches the live call's context; returns false when
  // the call was already cancelled.
  bool SetContext(grpc::ClientContext* ctx);
  void ClearContext();

 private:
  int64_t timeout_ms_ = 0;
  absl::Mutex mu_;
  grpc::ClientContext* ctx_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

using StatusCallback = std::function<void(const absl::Status&)>;

class GrpcWorkerClient {
 public:
  // `task` ("/job:worker/replica:0/task:1") names the peer in errors.
  GrpcWorkerClient(std::string task, std::shared_ptr<grpc::Channel> channel);

  const std::string& task() const { return task_; }

  void GetStatusAsync(const GetStatusRequest* req, GetStatusResponse* resp,
                      CallOptions* opts, StatusCallback done);
  void CreateWorkerSessionAsync(const CreateWorkerSessionRequest* req,
                                CreateWorkerSessionResponse* resp, CallOptions* opts,
                                StatusCallback done);
  void DeleteWorkerSessionAsync(const DeleteWorkerSessionRequest* req,
                                DeleteWorkerSessionResponse* resp, CallOptions* opts,
                                StatusCallback done);
  void RegisterGraphAsync(const RegisterGraphRequest* req, RegisterGraphResponse* resp,
                          CallOptions* opts, StatusCallback done);
  void DeregisterGraphAsync(const DeregisterGraphRequest* req, DeregisterGraphResponse* resp,
                            CallOptions* opts, StatusCallback done);
  void RunGraphAsync(const RunGraphRequest* req, RunGraphResponse* resp, CallOptions* opts,
                     StatusCallback done);
  void CleanupGraphAsync(const CleanupGraphRequest* req, CleanupGraphResponse* resp,
                         CallOptions* opts, StatusCallback done);
  void CleanupAllAsync(const CleanupAllRequest* req, CleanupAllResponse* resp,
                       CallOptions* opts, StatusCallback done);

  // Fetches the tensor under `rendezvous_key` of step `step_id`, decoding
  // the raw-bytes response straight into `*tensor`.
  void RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key, Tensor* tensor,
                       bool* is_dead, CallOptions* opts, StatusCallback done);

 private:
  using Invoker = std::function<void(WorkerService::StubInterface::async_interface*,
                                     grpc::ClientContext*, std::function<void(grpc::Status)>)>;
  void Call(const char* name, CallOptions* opts, StatusCallback done, const Invoker& invoke);

  const std::string task_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<WorkerService::Stub> stub_;
  grpc::GenericStub generic_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_WORKER_CLIENT_H_
