// GraphDef -> Graph, with validation. Import rejects, naming the node: an
// unknown op, bad attrs, an input naming a missing node or output index,
// duplicate node names, a dtype mismatch between producer and consumer, a
// cycle that does not pass through a NextIteration node, a malformed device.
// As in TensorFlow, a Placeholder with an empty `shape` in a graph whose
// producer version is below 21 (or that has no versions) has unknown shape.
#ifndef DISTFLOW_GRAPH_GRAPH_CONSTRUCTOR_H_
#define DISTFLOW_GRAPH_GRAPH_CONSTRUCTOR_H_

#include <vector>

#include "absl/status/status.h"
#include "distflow/graph.pb.h"
#include "distflow/graph/graph.h"

namespace distflow {

struct GraphConstructorOptions {
  // Allow ops whose names start with '_' (Send/Recv in partition graphs).
  bool allow_internal_ops = true;
};

// REQUIRES: `graph` has no op nodes. On error `graph` is left unchanged.
absl::Status ConvertGraphDefToGraph(const GraphConstructorOptions& opts, const GraphDef& graph_def,
                                    Graph* graph);

// Adds SOURCE -> n for nodes without inputs and n -> SINK for nodes without
// outputs, so every op node hangs between them.
void FixupSourceAndSinkEdges(Graph* graph);

// Op nodes in an order where every node follows its inputs; back edges out of
// NextIteration nodes are ignored. InvalidArgument naming a node on a cycle
// when there is no such order.
absl::Status TopologicalOrder(const Graph& graph, std::vector<Node*>* order);

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_GRAPH_CONSTRUCTOR_H_
