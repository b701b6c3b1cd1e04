// GraphExecutionState: a session's graph, and the one path every session
// takes from it to something that can run — for a run signature, copy the
// graph, rewrite feeds and fetches (into _Arg/_Retval nodes that a call frame
// serves, or client-terminated _Recv/_Send nodes that a rendezvous serves),
// prune, lower function calls and functional control flow (If, While, Case,
// PartitionedCall) into plain dataflow, place on the session's devices (a
// stateful node keeps the device of its first placement), and partition by location with
// _Send/_Recv pairs. DirectSession partitions by device and builds an ExecutorSet from the result;
// MasterSession partitions by task and registers each part with its worker, whose GraphMgr
// partitions it again by device with PartitionGraph and builds an ExecutorSet. Thread-safe.
#ifndef DISTFLOW_COMMON_RUNTIME_GRAPH_EXECUTION_STATE_H_
#define DISTFLOW_COMMON_RUNTIME_GRAPH_EXECUTION_STATE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/device_set.h"
#include "distflow/common_runtime/placer.h"
#include "distflow/common_runtime/run_signature.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/types.h"
#include "distflow/graph.pb.h"
#include "distflow/graph/graph.h"
#include "distflow/graph/subgraph.h"

namespace distflow {

// How a placed graph is cut into partitions.
enum class PartitionBy {
  kDevice,  // one partition per device (a session's executors)
  kTask,    // one partition per task (what a master registers per worker)
};

struct PartitionGraphOptions {
  PartitionBy by = PartitionBy::kDevice;
  // The incarnation of a device by full name (0 when unknown).
  std::function<uint64_t(const std::string&)> incarnation;
  // Names the partitioner makes are "<prefix>/<tag><n>", n from `counter`
  // (shared by every partitioning whose nodes must not collide).
  absl::string_view name_tag = "_";
  std::atomic<int64_t>* counter = nullptr;
  bool enable_bfloat16_sendrecv = false;
};

// Partitions the placed graph `g` (every op node has an assigned device).
// The partitioner's errors, naming the node.
absl::Status PartitionGraph(const PartitionGraphOptions& options, Graph* g,
                            std::unordered_map<std::string, GraphDef>* partitions);

// What a run signature compiles to, before any executor exists.
struct ClientGraph {
  struct Feed {
    DataType dtype = DT_INVALID;
    // The Placeholder's declared shape; unknown rank when not a Placeholder.
    PartialTensorShape shape;
    // The client rendezvous key the value is sent under (kRendezvous only).
    std::string key;
  };
  RunSignature signature;
  std::vector<Feed> feeds;  // parallel to signature.feeds
  // Parallel to signature.fetches (kRendezvous only; empty with kCallFrame,
  // where fetch i is result i of the call frame).
  std::vector<std::string> fetch_keys;
  // Location (device or task name) -> the partition placed there.
  std::unordered_map<std::string, GraphDef> partitions;

  // InvalidArgument naming the feed (`given`, as the caller spelled it)
  // when a value of `dtype` and `shape` cannot feed signature.feeds[i].
  absl::Status CheckFeed(size_t i, const std::string& given, DataType dtype,
                         const TensorShape& shape) const;
};

class GraphExecutionState {
 public:
  struct Options {
    // Every device runs may use, with the client device set. Borrowed; must
    // outlive the state.
    const DeviceSet* devices = nullptr;
    bool allow_soft_placement = false;
    bool log_device_placement = false;
    bool enable_bfloat16_sendrecv = false;
    // Tag of the node names the partitioner makes (see PartitionGraphOptions).
    std::string name_tag = "_";
    // Feeds are checked against their Placeholder's declared shape unless
    // this is set (ConfigProto.feed_shapes_unchecked).
    bool feed_shapes_unchecked = false;
  };
  explicit GraphExecutionState(Options options);
  GraphExecutionState(const GraphExecutionState&) = delete;
  GraphExecutionState& operator=(const GraphExecutionState&) = delete;

  // Imports `graph_def` as the session's graph. FailedPrecondition when
  // there is one already; the importer's errors naming the node.
  absl::Status Create(const GraphDef& graph_def);
  // Adds the nodes (and library functions) of `graph_def`; creates the
  // graph when there is none. On error the graph is unchanged. Client
  // graphs built before stay valid: existing nodes cannot change.
  absl::Status Extend(const GraphDef& graph_def);
  bool has_graph() const;

  // Compiles one signature: rewrite feeds and fetches by `convention`,
  // prune, place, partition by `by`. FailedPrecondition without a graph;
  // InvalidArgument naming the tensor, node or device otherwise.
  absl::StatusOr<std::unique_ptr<ClientGraph>> BuildClientGraph(
      const RunSignature& signature, PartitionBy by, subgraph::FeedFetchConvention convention);

 private:
  absl::Status ResetLocked(const GraphDef& graph_def) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  std::atomic<int64_t> name_counter_{0};
  mutable absl::Mutex mu_;
  std::shared_ptr<const Graph> graph_ ABSL_GUARDED_BY(mu_);
  StatefulPlacements stateful_placements_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_GRAPH_EXECUTION_STATE_H_
