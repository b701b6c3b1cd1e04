// Constants in client graphs, and the conversion of an op's Inputs into the
// tensors that feed it (a constant Input becomes a Const node first).
// Every function records its error in the scope's status and returns a null
// Output / NodeOut on failure, or when the scope already holds an error.
#ifndef DISTFLOW_CC_CONST_OP_H_
#define DISTFLOW_CC_CONST_OP_H_

#include <vector>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/graph/node_builder.h"

namespace distflow {
namespace ops {

// A Const node (attrs `value` and `dtype`) holding `value`, e.g.
// Const(scope, 3.f), Const(scope, {1, 2, 3}), Const(scope, {{1.f}, {2.f}}).
Output Const(const Scope& scope, const Input::Initializer& value);
// `value` in `shape`: a single value is repeated into every element; a value
// with shape.num_elements() elements is laid out row-major in `shape`; any
// other count is an error naming both shapes.
Output Const(const Scope& scope, const Input::Initializer& value, const TensorShape& shape);

// The tensor `input` denotes: its Output, or a new Const node (named under
// the sub-scope "Const") holding its constant value.
NodeBuilder::NodeOut AsNodeOut(const Scope& scope, const Input& input);
std::vector<NodeBuilder::NodeOut> AsNodeOutList(const Scope& scope, const InputList& inputs);

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_CONST_OP_H_
