// ExecutorSet: the executors of one graph partitioned by device — one
// Executor per device partition, each built with kernels from the session's
// SessionKernels — run together for a step and joined by a barrier. It is
// the last stage of the one execution pipeline (GraphExecutionState builds
// the partitions); DirectSession runs it for a whole local graph, GraphMgr
// for the part of a client graph registered with a worker.
// Immutable once built: RunAsync may be called concurrently.
#ifndef DISTFLOW_COMMON_RUNTIME_EXECUTOR_SET_H_
#define DISTFLOW_COMMON_RUNTIME_EXECUTOR_SET_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/common_runtime/device_mgr.h"
#include "distflow/common_runtime/executor.h"
#include "distflow/common_runtime/session_kernels.h"
#include "distflow/graph.pb.h"

namespace distflow {

class ExecutorSet {
 public:
  // `partitions` maps full device names of `device_mgr` to their graphs.
  // InvalidArgument naming the device when it is not in `device_mgr`; the
  // executor's errors (naming the node) when a partition cannot be built.
  // Borrows `device_mgr`, which must outlive the set; shares `kernels`.
  static absl::StatusOr<std::unique_ptr<ExecutorSet>> Create(
      std::unordered_map<std::string, GraphDef> partitions, const DeviceMgr* device_mgr,
      std::shared_ptr<SessionKernels> kernels);

  // Runs every executor for one step with `args`; `done` runs once, with
  // the step's first error, when all have finished (at once when there are
  // none); args.inline_start applies to the last executor only. The set
  // must stay alive until `done` has run.
  void RunAsync(const Executor::Args& args, Executor::DoneCallback done) const;

  // The partition graphs, in the order of their device names, written from
  // the executors' graphs on each call (the set keeps no GraphDef copies).
  std::vector<GraphDef> partition_graphs() const;
  size_t size() const { return executors_.size(); }

 private:
  ExecutorSet() = default;

  // Keeps the function runtimes the kernels call through alive; declared
  // first so the executors (and their kernels) go before it.
  std::shared_ptr<SessionKernels> kernels_;
  std::vector<std::unique_ptr<Executor>> executors_;
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_EXECUTOR_SET_H_
