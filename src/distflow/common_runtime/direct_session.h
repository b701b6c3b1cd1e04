// DirectSession: the in-process Session. It owns the session's CPU devices
// (ConfigProto.device_count["CPU"], default 1, named
// /job:localhost/replica:0/task:0/device:CPU:i), an inter-op thread pool
// (inter_op_parallelism_threads, 0 = one per core) and the CPU devices'
// shared intra-op pool (intra_op_parallelism_threads, 0 = one per core).
//
// Each run signature (sorted feeds, fetches and targets) is compiled once
// and cached: the graph is copied, rewritten so feeds arrive from and
// fetches go to the client through the rendezvous, pruned, placed (stateful
// nodes keep the device of their first placement), partitioned by device
// with _Send/_Recv pairs, and given one Executor per partition. Stateful
// kernels are shared by all executors of the session. Each step gets its own
// rendezvous, cancellation manager and step id; the executors of a step are
// joined by a barrier and the first error aborts the step.
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
#include "distflow/common_runtime/placer.h"
#include "distflow/common_runtime/session.h"
#include "distflow/core/threadpool.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {

class DirectSession : public Session {
 public:
  // Builds the devices and pools `options.config` asks for. InvalidArgument
  // for a negative device count or thread number or zero CPU devices.
  static absl::StatusOr<std::unique_ptr<DirectSession>> Make(
      const SessionOptions& options);
  // Closes the session and waits for running steps to finish.
  ~DirectSession() override;

  absl::Status Create(const GraphDef& graph) override;
  absl::Status Extend(const GraphDef& graph) override;
  absl::Status Run(const RunOptions& run_options,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::vector<std::string>& output_tensor_names,
                   const std::vector<std::string>& target_node_names,
                   std::vector<Tensor>* outputs,
                   RunMetadata* run_metadata) override;
  using Session::Run;
  absl::Status ListDevices(std::vector<DeviceAttributes>* response) override;
  absl::Status Close() override;

  const DeviceMgr& device_mgr() const { return *device_mgr_; }

 private:
  struct Executable;
  // A run's feeds, fetches and targets, normalised.
  struct Signature {
    std::vector<std::string> feeds;  // sorted, as given
    std::vector<std::string>
        fetches;  // unique tensors, sorted by canonical name
    std::vector<std::string> fetch_canonical;  // "node:index", parallel
    std::vector<std::string> targets;          // sorted, unique
    std::string key;
  };

  DirectSession(const SessionOptions& options,
                std::unique_ptr<DeviceMgr> device_mgr);
  // The cached executable of a signature, building it on first use.
  absl::StatusOr<std::shared_ptr<const Executable>> GetOrBuildExecutable(
      const Signature& signature);
  absl::StatusOr<std::shared_ptr<const Executable>> BuildExecutableLocked(
      const Signature& signature) ABSL_EXCLUSIVE_LOCKS_REQUIRED(graph_mu_);
  // Makes the kernel of `def` on `device`; stateful kernels are made once
  // per (device, node) and shared.
  absl::StatusOr<std::shared_ptr<OpKernel>> GetOrCreateKernel(
      Device* device, const NodeDef& def);
  absl::Status RunStep(
      const RunOptions& run_options, const Executable& executable,
      const std::vector<std::pair<std::string, Tensor>>& inputs,
      std::vector<Tensor>* fetched, RunMetadata* run_metadata);
  // Replaces the session's graph by the import of `graph_def`.
  absl::Status ResetGraphLocked(GraphDef graph_def)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(graph_mu_);

  const SessionOptions options_;
  const std::unique_ptr<DeviceMgr> device_mgr_;
  DeviceSet device_set_;
  Device* const client_device_;
  ThreadPool inter_op_pool_;
  const Executor::Runner runner_;

  // The session's graph (as given and imported). Building an executable
  // holds graph_mu_ (to copy the graph and place nodes), so builds run one
  // at a time; executables_mu_ is taken inside it, never the other way.
  absl::Mutex graph_mu_;
  GraphDef graph_def_ ABSL_GUARDED_BY(graph_mu_);
  std::unique_ptr<Graph> graph_ ABSL_GUARDED_BY(graph_mu_);
  StatefulPlacements stateful_placements_ ABSL_GUARDED_BY(graph_mu_);
  std::atomic<int64_t> edge_name_counter_{0};

  absl::Mutex executables_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const Executable>>
      executables_ ABSL_GUARDED_BY(executables_mu_);

  absl::Mutex kernels_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<OpKernel>> stateful_kernels_
      ABSL_GUARDED_BY(kernels_mu_);

  std::atomic<int64_t> next_step_id_{1};
  // Cancelled by Close; every step is linked to it.
  CancellationManager session_cancellation_;
  absl::Mutex run_mu_;
  bool closed_ ABSL_GUARDED_BY(run_mu_) = false;
  int running_steps_ ABSL_GUARDED_BY(run_mu_) = 0;
};

// DirectSession::Make as a Session.
absl::StatusOr<std::unique_ptr<Session>> NewDirectSession(
    const SessionOptions& options);

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_DIRECT_SESSION_H_
