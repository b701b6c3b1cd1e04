// ImportGraphDef: adds the nodes of a GraphDef to a graph that may already
// hold nodes, as TensorFlow's import_graph_def does: names get a prefix
// ("prefix/node"), and tensors the caller maps (input_map) are replaced by
// tensors of the graph, so an imported model can read from nodes the caller
// built. The GraphDef is validated whole first (ConvertGraphDefToGraph's
// checks); then the import adds every node and edge, infers shapes in
// topological order, or, on any error, removes what it added and leaves the
// graph as it was. Errors name the node or the tensor: InvalidArgument for
// an imported name already in the graph, an input_map key that is not a
// tensor of the GraphDef, a mapped tensor of another dtype.
#ifndef DISTFLOW_GRAPH_GRAPH_IMPORT_H_
#define DISTFLOW_GRAPH_GRAPH_IMPORT_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "distflow/graph.pb.h"
#include "distflow/graph/graph.h"
#include "distflow/graph/node_builder.h"
#include "distflow/graph/shape_refiner.h"

namespace distflow {

struct ImportGraphDefOptions {
  // Prepended to every imported name with a "/"; empty: names are kept.
  std::string prefix;
  // Tensor of the GraphDef ("node:index"; "node" means "node:0") -> the
  // tensor of the graph its consumers read instead.
  absl::flat_hash_map<std::string, NodeBuilder::NodeOut> input_map;
};

// Imports `graph_def` into `graph`, inferring shapes with `refiner` (the
// graph's). On success `*added` (may be null) holds the new nodes, each
// after its inputs.
absl::Status ImportGraphDef(const ImportGraphDefOptions& options, const GraphDef& graph_def,
                            Graph* graph, ShapeRefiner* refiner, std::vector<Node*>* added);

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_GRAPH_IMPORT_H_
