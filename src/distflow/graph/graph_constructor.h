// GraphDef -> Graph, with validation. Import rejects, naming the node: an
// unknown op, bad attrs, an input naming a missing node or output index,
// duplicate node names, a dtype mismatch between producer and consumer, a
// cycle that does not pass through a NextIteration node, a malformed device;
// and, with ResourceExhausted naming the limit, a graph of more nodes than
// the process's limit (SetMaxGraphNodes).
// As in TensorFlow, a Placeholder with an empty `shape` in a graph whose
// producer version is below 21 (or that has no versions) has unknown shape.
#ifndef DISTFLOW_GRAPH_GRAPH_CONSTRUCTOR_H_
#define DISTFLOW_GRAPH_GRAPH_CONSTRUCTOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "distflow/graph.pb.h"
#include "distflow/graph/graph.h"

namespace distflow {

// The most nodes an imported graph may have unless its options say
// otherwise: kDefaultMaxGraphNodes until SetMaxGraphNodes changes it (the
// server's --max-graph-nodes); 0 means no limit. Thread-safe.
inline constexpr int64_t kDefaultMaxGraphNodes = 1000000;
int64_t MaxGraphNodes();
void SetMaxGraphNodes(int64_t max_nodes);

struct GraphConstructorOptions {
  // More nodes than this is ResourceExhausted; 0 means no limit. Graphs the
  // runtime derives from an imported graph (partitions) pass 0.
  int64_t max_nodes = MaxGraphNodes();
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
