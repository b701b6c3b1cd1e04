// StepStatsCollector: gathers the per-node timing records of one traced step
// from every executor of the step, grouped by device, into a StepStats
// proto. NodeStatsRecorder fills one record around a kernel invocation.
// StepStatsCollector is thread-safe; a NodeStatsRecorder belongs to the one
// thread running its node.
#ifndef DISTFLOW_COMMON_RUNTIME_STEP_STATS_COLLECTOR_H_
#define DISTFLOW_COMMON_RUNTIME_STEP_STATS_COLLECTOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distflow/framework/op_kernel.h"
#include "distflow/step_stats.pb.h"

namespace distflow {

class StepStatsCollector {
 public:
  StepStatsCollector() = default;
  StepStatsCollector(const StepStatsCollector&) = delete;
  StepStatsCollector& operator=(const StepStatsCollector&) = delete;

  // Adds one node's record to `device`'s list.
  void Save(const std::string& device, NodeExecStats stats);

  // Moves everything saved so far into `out` (one DeviceStepStats per
  // device, devices in name order, records in save order, thread names
  // filled in) and empties the collector.
  void Finalize(StepStats* out);

 private:
  absl::Mutex mu_;
  std::map<std::string, std::vector<NodeExecStats>> by_device_ ABSL_GUARDED_BY(mu_);
};

// A small stable number for the calling thread (1, 2, ... in order of first
// use), recorded as NodeExecStats.thread_id.
uint32_t CurrentThreadIdForStats();

// Times one node: construct when the node is taken off the ready queue, call
// OpStart/OpEnd around the kernel, then Finish with its outputs.
class NodeStatsRecorder {
 public:
  NodeStatsRecorder(const std::string& node_name, int64_t scheduled_micros);
  void OpStart();
  void OpEnd();
  // Records the outputs that `ctx` holds and the end time, and saves the
  // record under `device`.
  void Finish(OpKernelContext* ctx, const std::string& device, StepStatsCollector* collector);

 private:
  NodeExecStats stats_;
  int64_t start_nanos_ = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_STEP_STATS_COLLECTOR_H_
