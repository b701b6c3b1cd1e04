// Random tensor op definitions (RandomUniform, RandomStandardNormal,
// TruncatedNormal), TensorFlow-compatible: a 1-D int32/int64 `shape` input,
// `seed`/`seed2` attrs and the output `dtype`. They are stateful: each node
// continues its own random stream from step to step.
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

absl::Status RandomShape(InferenceContext* c) {
  PartialTensorShape out;
  DF_RETURN_IF_ERROR(c->ShapeFromShapeTensor(0, &out));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("RandomUniform")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape)
    .Doc("Values drawn uniformly from [0, 1).");

REGISTER_OP("RandomStandardNormal")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape)
    .Doc("Values drawn from the normal distribution with mean 0 and stddev 1.");

REGISTER_OP("TruncatedNormal")
    .Input("shape: T")
    .Output("output: dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("dtype: {half, bfloat16, float, double}")
    .Attr("T: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(RandomShape)
    .Doc(
        "Standard normal values; draws more than 2 stddevs from 0 are "
        "redrawn.");

}  // namespace distflow
