// The lowering pass: before placement, every functional node of a graph is
// replaced by plain dataflow, so that placement and partitioning see only
// ordinary ops and a call or a loop may span devices and tasks.
//
//  - A call — PartitionedCall, StatefulPartitionedCall, or a node whose op
//    is a function of the graph's library — is inlined: each argument passes
//    through an Identity, body nodes are renamed "<call>/<node>" and keep
//    their own device (else take the call's), body nodes without inputs wait
//    on a NoOp that follows every argument and the call's control inputs
//    (so they share the call's frame and deadness), and the call's consumers
//    read the body's results directly.
//  - If/StatelessIf becomes Switch nodes on the predicate, both branches
//    inlined behind pivots of the predicate, and a Merge per output.
//  - Case/StatelessCase becomes _SwitchN nodes on the branch index, one
//    inlined branch per output of the _SwitchN, and a Merge per output.
//  - While/StatelessWhile becomes a TF1 loop in the frame named after the
//    node: Enter (parallel_iterations from the attr) -> Merge -> cond body ->
//    LoopCond -> Switch -> Exit on false, Identity -> body -> NextIteration
//    -> back into the Merge on true.
// Control dependents of a lowered node wait for what it ran. Nested
// functional nodes (a call inside a branch, an If inside a loop body) are
// lowered in turn.
//
// Errors name the node: a function missing from the library, a call whose
// argument or result types do not match its function, a non-bool If or
// While predicate, a recursive call chain ("f -> g -> f"), nesting deeper
// than kMaxFunctionCallDepth, or a graph grown past kMaxLoweredNodes.
// On error the graph is left partly lowered and must be discarded.
// Not thread-safe: the caller owns the graph.
#ifndef DISTFLOW_GRAPH_LOWER_FUNCTIONAL_OPS_H_
#define DISTFLOW_GRAPH_LOWER_FUNCTIONAL_OPS_H_

#include "absl/status/status.h"
#include "distflow/graph/graph.h"

namespace distflow {

inline constexpr int kMaxFunctionCallDepth = 64;
inline constexpr int kMaxLoweredNodes = 1 << 22;

// True for the node kinds LowerFunctionalOps replaces (a call of a function
// in `g`'s library among them).
bool IsFunctionalNode(const Graph& g, const Node& node);

absl::Status LowerFunctionalOps(Graph* g);

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_LOWER_FUNCTIONAL_OPS_H_
