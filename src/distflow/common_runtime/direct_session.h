// DirectSession: the in-process Session. It owns the session's CPU devices
// (ConfigProto.device_count["CPU"], default 1, named
// /job:localhost/replica:0/task:0/device:CPU:i), an inter-op thread pool
// (inter_op_parallelism_threads, 0 = one per core) and the CPU devices'
// shared intra-op pool (intra_op_parallelism_threads, 0 = one per core).
//
// Each run signature is compiled once and cached: the session's
// GraphExecutionState rewrites, prunes, places and partitions the graph by
// device, and an ExecutorSet (one Executor per device, stateful kernels
// shared by the whole session through SessionKernels) runs it. Feeds and
// fetches are the graph's _Arg and _Retval nodes (TensorFlow's function
// convention): each step gets its own call frame holding them, and its own
// rendezvous (between its devices), cancellation manager and step id; the
// executors of a step are joined by a barrier and the first error aborts the
// step.
//
// Thread-safe: Run may be called concurrently from any number of threads.
#ifndef DISTFLOW_COMMON_RUNTIME_DIRECT_SESSION_H_
#define DISTFLOW_COMMON_RUNTIME_DIRECT_SESSION_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/device_mgr.h"
#include "distflow/common_runtime/device_set.h"
#include "distflow/common_runtime/executor.h"
#include "distflow/common_runtime/graph_execution_state.h"
#include "distflow/common_runtime/run_signature.h"
#include "distflow/common_runtime/session.h"
#include "distflow/common_runtime/session_kernels.h"
#include "distflow/core/threadpool.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {

class DirectSession : public Session {
 public:
  // Builds the devices and pools `options.config` asks for. InvalidArgument
  // for a negative device count or thread number or zero CPU devices.
  static absl::StatusOr<std::unique_ptr<DirectSession>> Make(const SessionOptions& options);
  // Closes the session and waits for running steps to finish.
  ~DirectSession() override;

  absl::Status Create(const GraphDef& graph) override;
  absl::Status Extend(const GraphDef& graph) override;
  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_tensor_names,
                   const std::vector<std::string>& target_node_names, std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) override;
  using Session::Run;
  absl::Status ListDevices(std::vector<DeviceAttributes>* response) override;
  absl::Status CancelRunningSteps() override;
  absl::Status Close() override;

 private:
  struct Executable;

  DirectSession(const SessionOptions& options, std::unique_ptr<DeviceMgr> device_mgr);
  // The cached executable of a signature, building it on first use.
  absl::StatusOr<std::shared_ptr<const Executable>> GetOrBuildExecutable(
      const RunSignature& signature);
  absl::Status RunStep(const RunOptions& run_options, const Executable& executable,
                       const std::vector<std::pair<std::string, Tensor>>& inputs,
                       const RunSignatureIndex& index, std::vector<Tensor>* fetched,
                       RunMetadata* run_metadata);

  const SessionOptions options_;
  const std::unique_ptr<DeviceMgr> device_mgr_;
  DeviceSet device_set_;
  Device* const client_device_;
  ThreadPool inter_op_pool_;
  const Executor::Runner runner_;
  // The session's graph and the path from it to partitions.
  GraphExecutionState execution_state_;
  // Stateful kernels shared by every executable of the session.
  const std::shared_ptr<SessionKernels> kernels_;

  // Serialises builds, so one signature is built once.
  absl::Mutex build_mu_;
  absl::Mutex executables_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const Executable>> executables_
      ABSL_GUARDED_BY(executables_mu_);

  std::atomic<int64_t> next_step_id_{1};
  absl::Mutex run_mu_;
  bool closed_ ABSL_GUARDED_BY(run_mu_) = false;
  int running_steps_ ABSL_GUARDED_BY(run_mu_) = 0;
  // Every running step is linked to it. Close cancels it for good;
  // CancelRunningSteps cancels it and puts a fresh one in its place for the
  // steps after.
  std::shared_ptr<CancellationManager> running_cancellation_ ABSL_GUARDED_BY(run_mu_) =
      std::make_shared<CancellationManager>();
};

// DirectSession::Make as a Session.
absl::StatusOr<std::unique_ptr<Session>> NewDirectSession(const SessionOptions& options);

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_DIRECT_SESSION_H_
