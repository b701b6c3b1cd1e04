// NoOp: does nothing; used to group control dependencies.
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {

REGISTER_OP("NoOp").SetShapeFn(NoOutputs).Doc("Does nothing; a target for control edges.");

}  // namespace distflow
