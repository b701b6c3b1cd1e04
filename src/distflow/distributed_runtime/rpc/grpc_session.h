// A Session whose graph runs on a cluster: every call goes to a master over
// gRPC (target "grpc://host:port"). Beyond the Session interface it offers
// callables (a fixed signature prepared once and run many times) and partial
// runs. Calls that are safe to repeat (ListDevices, Close, MakeCallable's
// lookups) are retried with backoff when the master is briefly Unavailable.
// Run's and RunCallable's steps go on call streams to the master
// (RunStepStream, RunCallableStream: one stream per thread running a step
// at once, grpc_sync_call_streams.h) instead of a unary call each.
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_SESSION_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_SESSION_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/session.h"
#include "distflow/distributed_runtime/rpc/grpc_sync_call_streams.h"
#include "distflow/master_service.grpc.pb.h"

namespace distflow {

class GrpcSession : public Session {
 public:
  // InvalidArgument when the target is not "grpc://host:port".
  static absl::StatusOr<std::unique_ptr<GrpcSession>> Create(const SessionOptions& options);
  ~GrpcSession() override;

  absl::Status Create(const GraphDef& graph) override;
  absl::Status Extend(const GraphDef& graph) override;
  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_tensor_names,
                   const std::vector<std::string>& target_node_names, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) override;
  using Session::Run;
  absl::Status ListDevices(std::vector<DeviceAttributes>* response) override;
  // Cancels the steps in flight (Run's and RunCallable's): each returns
  // Cancelled at once; the master cancels a step whose call was cancelled.
  absl::Status CancelRunningSteps() override;
  absl::Status Close() override;

  using CallableHandle = int64_t;
  absl::Status MakeCallable(const CallableOptions& options, CallableHandle* handle);
  // `feeds` follow options.feed's order; outputs follow options.fetch's.
  absl::Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                           std::vector<Tensor>* outputs, RunMetadata* run_metadata);
  absl::Status ReleaseCallable(CallableHandle handle);

  // Partial runs: set up once with every feed and fetch, then feed and
  // fetch in several calls; each node runs once for the whole partial run.
  absl::Status PRunSetup(const std::vector<std::string>& input_names,
                         const std::vector<std::string>& output_names,
                         const std::vector<std::string>& target_nodes, std::string* handle);
  absl::Status PRun(const std::string& handle,
                    const std::vector<std::pair<std::string, Tensor>>& inputs,
                    const std::vector<std::string>& output_names, std::vector<Tensor>* outputs);

 private:
  GrpcSession(SessionOptions options, std::string address, std::shared_ptr<grpc::Channel> channel);
  absl::StatusOr<std::string> Handle();
  // The deadline of a control call (create, extend, list, close, ...):
  // ConfigProto.operation_timeout_in_ms when set, else `fallback_ms`.
  int64_t ControlTimeoutMs(int64_t fallback_ms) const;
  // Creates the remote session with an empty graph when none exists yet.
  absl::Status EnsureCreated();
  // The status of a call to the master. An unreachable master gets a TLS
  // hint only while no call of this session has ever reached it: once one
  // has, TLS is known to match, and a later failure is the master going away
  // (even if a restarted one listens at the address again).
  absl::Status Check(const grpc::Status& s);
  // Adds (`running`) or drops a step's call context in running_, which
  // CancelRunningSteps cancels.
  void TrackRunning(grpc::ClientContext* ctx, bool running);

  const SessionOptions options_;
  const std::string address_;
  std::unique_ptr<MasterService::Stub> stub_;
  SyncCallStreams<RunStepStreamRequest, RunStepStreamResponse> run_step_streams_;
  SyncCallStreams<RunCallableStreamRequest, RunCallableStreamResponse> run_callable_streams_;
  std::atomic<bool> reached_{false};
  absl::Mutex mu_;
  std::string handle_ ABSL_GUARDED_BY(mu_);
  int64_t graph_version_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // The contexts of the steps in flight (their streams').
  absl::flat_hash_set<grpc::ClientContext*> running_ ABSL_GUARDED_BY(mu_);
};

// Makes NewSession accept "grpc://" targets. Idempotent; linking the
// distributed runtime registers it too.
void RegisterGrpcSessionFactory();

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_SESSION_H_
