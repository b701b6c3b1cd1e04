// The WorkerInterface of a remote task under grpc+verbs: every control call
// goes to the wrapped (gRPC) worker; RecvTensor moves the tensor over the
// task's verbs channel (rdma_mgr.h). When no verbs provider reaches the
// task (another host without an RDMA device) receives stay on the wrapped
// worker. CallOptions work as for any transport: the deadline fails a
// receive with DeadlineExceeded and StartCancel with Cancelled, both at
// once, naming the task. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_VERBS_WORKER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_VERBS_WORKER_H_

#include <atomic>
#include <memory>
#include <string>

#include "distflow/distributed_runtime/verbs/rdma_mgr.h"
#include "distflow/distributed_runtime/worker_interface.h"

namespace distflow {

class VerbsWorker : public WorkerInterface {
 public:
  // `mgr` must outlive this worker.
  VerbsWorker(std::unique_ptr<WorkerInterface> control, RdmaMgr* mgr,
              RemoteAddressExchange exchange);

  const std::string& task() const override { return control_->task(); }

  void GetStatusAsync(const GetStatusRequest* req, GetStatusResponse* resp, CallOptions* opts,
                      StatusCallback done) override {
    control_->GetStatusAsync(req, resp, opts, std::move(done));
  }
  void CreateWorkerSessionAsync(const CreateWorkerSessionRequest* req,
                                CreateWorkerSessionResponse* resp, CallOptions* opts,
                                StatusCallback done) override {
    control_->CreateWorkerSessionAsync(req, resp, opts, std::move(done));
  }
  void DeleteWorkerSessionAsync(const DeleteWorkerSessionRequest* req,
                                DeleteWorkerSessionResponse* resp, CallOptions* opts,
                                StatusCallback done) override {
    control_->DeleteWorkerSessionAsync(req, resp, opts, std::move(done));
  }
  void RegisterGraphAsync(const RegisterGraphRequest* req, RegisterGraphResponse* resp,
                          CallOptions* opts, StatusCallback done) override {
    control_->RegisterGraphAsync(req, resp, opts, std::move(done));
  }
  void DeregisterGraphAsync(const DeregisterGraphRequest* req, DeregisterGraphResponse* resp,
                            CallOptions* opts, StatusCallback done) override {
    control_->DeregisterGraphAsync(req, resp, opts, std::move(done));
  }
  void RunGraphAsync(const RunGraphRequest* req, RunGraphResponse* resp, CallOptions* opts,
                     StatusCallback done) override {
    control_->RunGraphAsync(req, resp, opts, std::move(done));
  }
  void CleanupGraphAsync(const CleanupGraphRequest* req, CleanupGraphResponse* resp,
                         CallOptions* opts, StatusCallback done) override {
    control_->CleanupGraphAsync(req, resp, opts, std::move(done));
  }
  void CleanupAllAsync(const CleanupAllRequest* req, CleanupAllResponse* resp, CallOptions* opts,
                       StatusCallback done) override {
    control_->CleanupAllAsync(req, resp, opts, std::move(done));
  }

  void RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key, Tensor* tensor,
                       bool* is_dead, CallOptions* opts, StatusCallback done) override;

 private:
  const std::unique_ptr<WorkerInterface> control_;
  RdmaMgr* const mgr_;
  const RemoteAddressExchange exchange_;
  // Set once no verbs provider reaches the task: receives use control_.
  std::atomic<bool> use_control_{false};
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_VERBS_VERBS_WORKER_H_
