// Every client op wrapper in one include: Const and the array, math, nn,
// random and NoOp wrappers.
#ifndef DISTFLOW_CC_OPS_STANDARD_OPS_H_
#define DISTFLOW_CC_OPS_STANDARD_OPS_H_

#include "distflow/cc/const_op.h"
#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/control_flow_ops.h"
#include "distflow/cc/ops/math_ops.h"
#include "distflow/cc/ops/nn_ops.h"
#include "distflow/cc/ops/no_op.h"
#include "distflow/cc/ops/random_ops.h"

#endif  // DISTFLOW_CC_OPS_STANDARD_OPS_H_
