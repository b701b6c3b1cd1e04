#include "distflow/cc/ops/no_op.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

NoOp::NoOp(const Scope& scope) : operation(internal::BuildOp(scope, "NoOp", {})) {}

}  // namespace ops
}  // namespace distflow
