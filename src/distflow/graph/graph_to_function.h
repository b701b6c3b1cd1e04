// GraphToFunctionDef: the function a graph computes, as a FunctionDef for a
// graph's library (what TensorFlow's graph_to_functiondef does for
// tf.function and Dataset.map): the Placeholders `args` become the inputs
// "arg0", "arg1", ... in order; `outputs` (tensors of the graph) become the
// outputs "output0", ...; every other op node is a node of the function,
// its inputs rewritten to the function form ("node:out_arg:k", an input's
// name, "^node"). A Placeholder that is not an arg, an arg that is not a
// Placeholder, or a control edge from an arg is InvalidArgument naming it.
#ifndef DISTFLOW_GRAPH_GRAPH_TO_FUNCTION_H_
#define DISTFLOW_GRAPH_GRAPH_TO_FUNCTION_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/function.pb.h"
#include "distflow/graph/graph.h"

namespace distflow {

// A tensor of the graph: its node and output index.
using GraphTensor = std::pair<const Node*, int>;

absl::StatusOr<FunctionDef> GraphToFunctionDef(const Graph& graph, const std::string& name,
                                               const std::vector<const Node*>& args,
                                               const std::vector<GraphTensor>& outputs);

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_GRAPH_TO_FUNCTION_H_
