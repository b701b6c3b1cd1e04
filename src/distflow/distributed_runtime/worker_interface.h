// WorkerInterface: the worker service as the master and the remote
// rendezvous see it, whatever carries the calls. Every call is asynchronous:
// it returns at once and runs `done` exactly once, on some thread, when the
// reply (or an error) is in. Request and response objects and `opts` are
// borrowed and must stay valid until `done` runs. Implementations: the gRPC
// client (rpc/grpc_worker_client.h) and LocalWorker (local_worker.h, calls
// into a Worker of this process without serialization).
// Implementations are thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_INTERFACE_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_INTERFACE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/framework/tensor.h"
#include "distflow/worker.pb.h"

namespace distflow {

using StatusCallback = std::function<void(const absl::Status&)>;

// Per-call options: a deadline and a way to cancel. StartCancel may be
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

  // For transports: `cancel` is what cancelling the live call takes; it
  // runs (once, outside any lock of this object) when StartCancel comes
  // while it is set, so it must keep alive whatever it touches: it may run
  // just after ClearCancelCallback returned. Returns false, and keeps
  // nothing, when the call was already cancelled.
  bool SetCancelCallback(std::function<void()> cancel);
  void ClearCancelCallback();

 private:
  int64_t timeout_ms_ = 0;
  absl::Mutex mu_;
  std::function<void()> cancel_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

class WorkerInterface {
 public:
  virtual ~WorkerInterface() = default;

  // The task this worker is ("/job:worker/replica:0/task:1"), for errors.
  virtual const std::string& task() const = 0;

  virtual void GetStatusAsync(const GetStatusRequest* req, GetStatusResponse* resp,
                              CallOptions* opts, StatusCallback done) = 0;
  virtual void CreateWorkerSessionAsync(const CreateWorkerSessionRequest* req,
                                        CreateWorkerSessionResponse* resp, CallOptions* opts,
                                        StatusCallback done) = 0;
  virtual void DeleteWorkerSessionAsync(const DeleteWorkerSessionRequest* req,
                                        DeleteWorkerSessionResponse* resp, CallOptions* opts,
                                        StatusCallback done) = 0;
  virtual void RegisterGraphAsync(const RegisterGraphRequest* req, RegisterGraphResponse* resp,
                                  CallOptions* opts, StatusCallback done) = 0;
  virtual void DeregisterGraphAsync(const DeregisterGraphRequest* req,
                                    DeregisterGraphResponse* resp, CallOptions* opts,
                                    StatusCallback done) = 0;
  virtual void RunGraphAsync(const RunGraphRequest* req, RunGraphResponse* resp, CallOptions* opts,
                             StatusCallback done) = 0;
  virtual void CleanupGraphAsync(const CleanupGraphRequest* req, CleanupGraphResponse* resp,
                                 CallOptions* opts, StatusCallback done) = 0;
  virtual void CleanupAllAsync(const CleanupAllRequest* req, CleanupAllResponse* resp,
                               CallOptions* opts, StatusCallback done) = 0;

  // Fetches the tensor under `rendezvous_key` of step `step_id` into
  // `*tensor` (and its dead bit into `*is_dead`), with no copy a transport
  // can avoid.
  virtual void RecvTensorAsync(int64_t step_id, const std::string& rendezvous_key, Tensor* tensor,
                               bool* is_dead, CallOptions* opts, StatusCallback done) = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_WORKER_INTERFACE_H_
