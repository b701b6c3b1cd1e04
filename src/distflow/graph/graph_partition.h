// Splits a placed graph into one GraphDef per location (a device for the
// local session, a task for the master), replacing every edge between
// locations with a _Send/_Recv pair that meets in the step's rendezvous.
//
// Guarantees of Partition's output:
//  * every op node of the graph appears in exactly one partition, with its
//    assigned device in NodeDef.device; SOURCE and SINK and their edges are
//    dropped;
//  * a data edge between locations becomes a _Send in the source partition
//    and a _Recv in the destination one (attrs tensor_name, send_device,
//    send_device_incarnation, recv_device, client_terminated=false, and T /
//    tensor_type); consumers in one partition of the same source output and
//    memory type share one pair;
//  * a control edge between locations becomes a float Const of shape [0]
//    controlled by the source, sent and received, then read by an Identity
//    that becomes the control input of the destination;
//  * an edge inside one partition whose two ends disagree on memory type goes
//    through a _Send/_Recv pair too, with a control edge from the send to the
//    recv so the recv is not scheduled first;
//  * a recv that delivers the value of a ref output gets control edges from
//    the other inputs of its consumer, so the read happens after the writes
//    the consumer waits for;
//  * loops (TF1 frames: Enter ... Exit) may span locations: a non-constant
//    Enter or a NextIteration runs on its consumers' device (moved, or
//    copied per device); every device that receives a value inside a frame
//    gets its own control loop for the frame (Enter/Merge/Switch/
//    NextIteration on a float Const, chained for nested frames, its Merge
//    marked with the attr _control_loop) whose Switch reads the frame's
//    LoopCond, and the _Recvs there wait for that Merge, so they run once
//    per iteration of the loop, in the frame and iteration the sender's key
//    names; the graph `g` itself gains these nodes, and partitioning a graph
//    that has them (a worker's part of a master's partition) adds no more;
//  * each partition imports with ConvertGraphDefToGraph and is acyclic when
//    the graph was, but for the NextIteration back edges of its loops.
// Functions here are thread-compatible: they only read the graph and call the
// options' functions from the calling thread.
#ifndef DISTFLOW_GRAPH_GRAPH_PARTITION_H_
#define DISTFLOW_GRAPH_GRAPH_PARTITION_H_

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "distflow/graph.pb.h"
#include "distflow/graph/graph.h"

namespace distflow {

// Where a tensor lives on its device. On CPU devices everything is host
// memory; on other devices an argument is host memory when its kernel says so
// (KernelDefBuilder::HostMemory) or when it is a DT_RESOURCE.
enum class MemoryType { kDevice, kHost };

struct PartitionOptions {
  // The partition a node belongs to, e.g. SplitByDevice or SplitByTask.
  std::function<std::string(const Node*)> node_to_loc;
  // A node name unique in the whole graph, derived from `prefix`. Must
  // return valid node names (see IsValidNodeName).
  std::function<std::string(absl::string_view prefix)> new_name;
  // The incarnation of a device, by full name. Stored in the
  // send_device_incarnation attr as the int64 with the same bits.
  std::function<uint64_t(const std::string& device_name)> get_incarnation;
  // DT_FLOAT tensors crossing partitions travel as DT_BFLOAT16: a Cast before
  // the _Send and a Cast back after the _Recv (attrs SrcT, DstT,
  // Truncate=false).
  bool enable_bfloat16_sendrecv = false;
};

// Partitions `g`. REQUIRES: every op node has an assigned device. On success
// `partitions` maps each location to its graph. InvalidArgument naming the
// node when a node has no or a malformed assigned device, a data input has
// no edge, or a ref input is fed from another partition, for malformed
// loops (see BuildControlFlowInfo) and for a loop that spans devices but has
// no LoopCond; InvalidArgument when an option function is missing.
absl::Status Partition(const PartitionOptions& opts, Graph* g,
                       std::unordered_map<std::string, GraphDef>* partitions);

// Checks that every partition's location is, or is a partial name matching,
// one of `device_names` (full device names), and that every node's device is
// one of them. InvalidArgument naming the location or node and listing the
// devices otherwise.
absl::Status ValidatePartitions(const std::unordered_map<std::string, GraphDef>& partitions,
                                absl::Span<const std::string> device_names);

// node_to_loc functions: the node's assigned device, and its task
// ("/job:J/replica:R/task:T"; empty when the device name lacks one).
std::string SplitByDevice(const Node* node);
std::string SplitByTask(const Node* node);

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_GRAPH_PARTITION_H_
