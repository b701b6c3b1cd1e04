// Constants in client graphs: Const nodes from values, and scalar constants
// of a dtype chosen at run time (as gradients and optimizers need). Op
// wrappers turn their constant Inputs into Const nodes through op_builder.h.
// Every function records its error in the scope's status and returns a null
// Output / NodeOut on failure, or when the scope already holds an error.
#ifndef DISTFLOW_CC_CONST_OP_H_
#define DISTFLOW_CC_CONST_OP_H_

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/framework/types.h"

namespace distflow {
namespace ops {

// A Const node (attrs `value` and `dtype`) holding `value`, e.g.
// Const(scope, 3.f), Const(scope, {1, 2, 3}), Const(scope, {{1.f}, {2.f}}).
Output Const(const Scope& scope, const Input::Initializer& value);
// `value` in `shape`: a single value is repeated into every element; a value
// with shape.num_elements() elements is laid out row-major in `shape`; any
// other count is an error naming both shapes.
Output Const(const Scope& scope, const Input::Initializer& value, const TensorShape& shape);

// A scalar Const of `dtype` (its base type, for a ref type) holding `value`
// (converted). Records InvalidArgument in the scope for a dtype that is not
// a number.
Output ScalarConst(const Scope& scope, double value, DataType dtype);

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_CONST_OP_H_
