#include "distflow/cc/ops/random_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::BuildOp;

RandomUniform::RandomUniform(const Scope& scope, Input shape, DataType dtype)
    : RandomUniform(scope, shape, dtype, Attrs()) {}
RandomUniform::RandomUniform(const Scope& scope, Input shape, DataType dtype, const Attrs& attrs)
    : operation(BuildOp(scope, "RandomUniform", {shape},
                        {{"dtype", dtype}, {"seed", attrs.seed_}, {"seed2", attrs.seed2_}})),
      output(operation.output(0)) {}

RandomNormal::RandomNormal(const Scope& scope, Input shape, DataType dtype)
    : RandomNormal(scope, shape, dtype, Attrs()) {}
RandomNormal::RandomNormal(const Scope& scope, Input shape, DataType dtype, const Attrs& attrs)
    : operation(BuildOp(scope, "RandomStandardNormal", {shape},
                        {{"dtype", dtype}, {"seed", attrs.seed_}, {"seed2", attrs.seed2_}})),
      output(operation.output(0)) {}

TruncatedNormal::TruncatedNormal(const Scope& scope, Input shape, DataType dtype)
    : TruncatedNormal(scope, shape, dtype, Attrs()) {}
TruncatedNormal::TruncatedNormal(const Scope& scope, Input shape, DataType dtype,
                                 const Attrs& attrs)
    : operation(BuildOp(scope, "TruncatedNormal", {shape},
                        {{"dtype", dtype}, {"seed", attrs.seed_}, {"seed2", attrs.seed2_}})),
      output(operation.output(0)) {}

}  // namespace ops
}  // namespace distflow
