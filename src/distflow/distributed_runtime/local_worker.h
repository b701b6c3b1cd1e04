// LocalWorker: WorkerInterface for a Worker in this process. Calls go to
// the Worker directly — no serialization, no copies: requests are read in
// place and RecvTensor hands over the producer's tensor itself. CallOptions
// work as over a transport: StartCancel cancels a running RunGraph's step,
// and a deadline ends the call with DeadlineExceeded naming the task.
// Thread-safe; the Worker must outlive it.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_LOCAL_WORKER_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_LOCAL_WORKER_H_

#include <string>

#include "distflow/distributed_runtime/worker.h"
#include "distflow/distributed_runtime/worker_interface.h"

namespace distflow {

class LocalWorker : public WorkerInterface {
 public:
  LocalWorker(std::string task, Worker* worker);

  const std::string& task() const override { return task_; }

  void GetStatusAsync(const GetStatusRequest* req, GetStatusResponse* resp, CallOptions* opts,
                      StatusCallback done) override;
  void CreateWorkerSessionAsync(const CreateWorkerSessionRequest* req,
                                CreateWorkerSessionResponse* resp, CallOptions* opts,
                                StatusCallback done) override;
  void DeleteWorkerSessionAsync(const DeleteWorkerSessionRequest* req,
                                DeleteWorkerSessionResponse* resp, CallOptions* opts,
                                StatusCallback done) override;
  void RegisterGraphAsync(const RegisterGraphRequest* req, RegisterGraphResponse* resp,
                          CallOptions* opts, StatusCallback done) override;
  void DeregisterGraphAsync(const DeregisterGraphRequest* req, DeregisterGraphResponse* resp,
                            CallOptions* opts, StatusCallback done) override;
  void RunGraphAsync(const RunGraphRequest* req, RunGraphResponse* resp, CallOptions* opts,
                     StatusCallback done) override;
  void CleanupGraphAsync(const CleanupGraphRequest* req, CleanupGraphResponse* resp,
                         CallOptions* opts, StatusCallback done) override;
  void CleanupAllAsync(const CleanupAllRequest* req, CleanupAllResponse* resp, CallOptions* opts,
                       StatusCallback done) override;
  void RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key, Tensor* tensor,
                       bool* is_dead, CallOptions* opts, StatusCallback done) override;

 private:
  const std::string task_;
  Worker* const worker_;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_LOCAL_WORKER_H_
