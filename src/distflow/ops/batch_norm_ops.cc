// FusedBatchNormV3 and FusedBatchNormGradV3: batch normalization over every
// dimension but the channels (the last, NHWC), in training mode (statistics
// of the batch, running averages updated) or inference mode (the given
// mean and variance). Names, inputs, outputs and attrs follow TensorFlow's;
// on CPU reserve_space_1/2 carry the batch mean and (biased) variance to
// the gradient and reserve_space_3 is empty.
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// The channel count of 4-D input 0, or -1 when unknown.
int64_t Channels(InferenceContext* c) {
  const PartialTensorShape& x = c->input(0);
  return x.unknown_rank() || x.dims() != 4 ? -1 : x.dim_size(3);
}

absl::Status FusedBatchNormShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithRank(0, 4, nullptr));
  for (int i = 1; i < 5; ++i) DF_RETURN_IF_ERROR(c->WithRank(i, 1, nullptr));
  c->set_output(0, c->input(0));
  const int64_t channels = Channels(c);
  for (int i = 1; i < 5; ++i) c->set_output(i, PartialTensorShape({channels}));
  c->set_output(5, PartialTensorShape({0}));
  return absl::OkStatus();
}

absl::Status FusedBatchNormGradShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithRank(0, 4, nullptr));
  DF_RETURN_IF_ERROR(c->WithRank(1, 4, nullptr));
  c->set_output(0, c->input(1));
  const int64_t channels = c->input(1).unknown_rank() ? -1 : c->input(1).dim_size(3);
  c->set_output(1, PartialTensorShape({channels}));
  c->set_output(2, PartialTensorShape({channels}));
  c->set_output(3, PartialTensorShape({0}));
  c->set_output(4, PartialTensorShape({0}));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("FusedBatchNormV3")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Output("reserve_space_3: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShape)
    .Doc("y = (x - mean) / sqrt(variance + epsilon) * scale + offset, per channel.");

REGISTER_OP("FusedBatchNormGradV3")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Input("reserve_space_3: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_4: U")
    .Output("reserve_space_5: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShape)
    .Doc("The gradients of FusedBatchNormV3 with respect to x, scale and offset.");

}  // namespace distflow
