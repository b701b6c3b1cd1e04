// The loop frames of a graph: which frame each node runs in, which frame
// encloses each frame, and each frame's LoopCond and parallel_iterations.
// The executor uses it to lay out per-frame state, the partitioner to give
// every device a loop's body spans its own control loop.
//
// Frames follow TensorFlow's tf.while_loop: an Enter starts (or joins) the
// frame named by its frame_name attr, and an Exit leaves its frame. A node's
// frame is the frame of its data and control inputs; an Enter belongs to the
// frame it enters and an Exit to the frame it leaves, so
//   InputFrame(n)  = the frame n's inputs come from (Enter: the enclosing one),
//   OutputFrame(n) = the frame n's outputs go to (Exit: the enclosing one).
// The root frame (index 0) holds everything outside loops.
//
// Guarantees after BuildControlFlowInfo returns OK: every op node has a frame;
// every edge joins OutputFrame(src) to InputFrame(dst); every frame name has
// one enclosing frame. Functions here are thread-compatible.
#ifndef DISTFLOW_GRAPH_CONTROL_FLOW_H_
#define DISTFLOW_GRAPH_CONTROL_FLOW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "distflow/graph/graph.h"

namespace distflow {

struct LoopFrame {
  // "" for the root frame.
  std::string name;
  // Index of the enclosing frame; -1 for the root frame.
  int parent = -1;
  // The first Enter of the frame met; nullptr for the root frame.
  const Node* enter = nullptr;
  // The frame's LoopCond, when the graph holds one.
  const Node* loop_cond = nullptr;
  int64_t parallel_iterations = 1;
};

struct ControlFlowInfo {
  // frames[0] is the root frame.
  std::vector<LoopFrame> frames;
  // By node id: the node's frame (see the file comment); -1 for SOURCE and
  // SINK.
  std::vector<int> node_frame;

  int InputFrame(const Node* n) const;
  int OutputFrame(const Node* n) const;
};

bool IsEnter(const Node* n);
bool IsExit(const Node* n);
bool IsLoopCond(const Node* n);

// Fills `info`. InvalidArgument naming the node when an edge joins two
// different frames, an Exit is outside any loop, a frame is entered from two
// enclosing frames, an Enter lacks a frame_name or has parallel_iterations
// < 1, or a node is reachable only through a NextIteration's back edge.
absl::Status BuildControlFlowInfo(const Graph& g, ControlFlowInfo* info);

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_CONTROL_FLOW_H_
