// Instantiation: a library function and the attrs of one call turned into a
// Graph. Each argument becomes an `_Arg` node (attrs T, index) and each
// result an `_Retval` node; body nodes keep their names, with every "$attr"
// placeholder bound from the call's attrs or the signature's defaults.
// Inputs are read in FunctionDef form: "arg" names an argument,
// "node:out_arg:index" output `index` of `node`'s output arg `out_arg`,
// "^node" a control input. `ret` maps each output arg to such a tensor and
// `control_ret` each control output to a body node.
//
// Errors are InvalidArgument (NotFound for a missing function) naming the
// function, and the node, attr or arg that is wrong. Stateless functions;
// the result is owned by the caller.
#ifndef DISTFLOW_GRAPH_FUNCTION_BODY_H_
#define DISTFLOW_GRAPH_FUNCTION_BODY_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/attr_value.pb.h"
#include "distflow/framework/function.h"
#include "distflow/graph/graph.h"

namespace distflow {

struct FunctionBody {
  // The body; its library is the one the function came from, so nested
  // calls resolve.
  std::unique_ptr<Graph> graph;
  std::vector<Node*> arg_nodes;          // _Arg i, parallel to arg_types
  std::vector<Node*> ret_nodes;          // _Retval i, parallel to ret_types
  std::vector<Node*> control_ret_nodes;  // in signature control_output order
  DataTypeVector arg_types, ret_types;
};

// Instantiates `func` (a function name and the attrs of this call) from
// `library`.
absl::StatusOr<std::unique_ptr<FunctionBody>> InstantiateFunctionBody(
    const std::shared_ptr<const FunctionLibraryDefinition>& library, const NameAttrList& func);

}  // namespace distflow

#endif  // DISTFLOW_GRAPH_FUNCTION_BODY_H_
