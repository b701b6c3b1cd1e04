// Neural-network op definitions: activations and their gradients, BiasAdd,
// Softmax/LogSoftmax, the softmax cross-entropy losses and L2Loss. Names,
// input order, attrs and allowed types follow TensorFlow's. Shape functions
// reject inputs whose shapes cannot work with InvalidArgument naming them.
#include <string>

#include "absl/strings/string_view.h"
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// Output 0 is the merge of inputs 0 and 1, which must describe the same
// shape (an elementwise gradient: gradients and features/outputs).
absl::Status MergeBothInputsShape(InferenceContext* c) {
  PartialTensorShape merged;
  if (!c->input(0).MergeWith(c->input(1), &merged).ok()) {
    const std::string& in0 = c->op_def().input_arg(0).name();
    const std::string& in1 = c->op_def().input_arg(1).name();
    return errors::InvalidArgument(in0, " and ", in1, " must have the same shape, got ", in0,
                                   " shape ", c->input(0).DebugString(), " and ", in1, " shape ",
                                   c->input(1).DebugString());
  }
  c->set_output(0, std::move(merged));
  return absl::OkStatus();
}

// The index of the channel dimension for `data_format` in a tensor of `rank`.
int ChannelDim(absl::string_view data_format, int rank) {
  return data_format == "NCHW" ? 1 : rank - 1;
}

absl::Status BiasAddShape(InferenceContext* c) {
  std::string data_format;
  DF_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  const PartialTensorShape& value = c->input(0);
  const PartialTensorShape& bias = c->input(1);
  if (!value.unknown_rank() && value.dims() < 2) {
    return errors::InvalidArgument("BiasAdd value must be at least 2-D, got shape ",
                                   value.DebugString());
  }
  if (!bias.unknown_rank() && bias.dims() != 1) {
    return errors::InvalidArgument("BiasAdd bias must be 1-D, got shape ", bias.DebugString());
  }
  if (value.unknown_rank()) {
    c->set_output(0, PartialTensorShape::Unknown());
    return absl::OkStatus();
  }
  PartialTensorShape out = value;
  const int channel = ChannelDim(data_format, value.dims());
  const int64_t bias_size = bias.unknown_rank() ? -1 : bias.dim_size(0);
  const int64_t value_channels = value.dim_size(channel);
  if (bias_size >= 0 && value_channels >= 0 && bias_size != value_channels) {
    return errors::InvalidArgument("BiasAdd bias length must match the channel dimension (",
                                   channel, ") of value for data_format ", data_format,
                                   ": bias shape ", bias.DebugString(), " vs. value shape ",
                                   value.DebugString());
  }
  if (value_channels < 0) out.set_dim(channel, bias_size);
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status BiasAddGradShape(InferenceContext* c) {
  std::string data_format;
  DF_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  const PartialTensorShape& grad = c->input(0);
  if (grad.unknown_rank()) {
    c->set_output(0, PartialTensorShape::UnknownDims(1));
    return absl::OkStatus();
  }
  if (grad.dims() < 2) {
    return errors::InvalidArgument("BiasAddGrad out_backprop must be at least 2-D, got shape ",
                                   grad.DebugString());
  }
  c->set_output(0, PartialTensorShape({grad.dim_size(ChannelDim(data_format, grad.dims()))}));
  return absl::OkStatus();
}

absl::Status SoftmaxShape(InferenceContext* c) {
  if (!c->input(0).unknown_rank() && c->input(0).dims() < 1) {
    return errors::InvalidArgument("logits must have rank >= 1, got shape ",
                                   c->input(0).DebugString());
  }
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

// features and labels are [batch, classes] matrices that broadcast against
// each other; loss is [batch], backprop the broadcast shape.
absl::Status SoftmaxCrossEntropyShape(InferenceContext* c) {
  const PartialTensorShape& features = c->input(0);
  const PartialTensorShape& labels = c->input(1);
  if ((!features.unknown_rank() && features.dims() != 2) ||
      (!labels.unknown_rank() && labels.dims() != 2)) {
    return errors::InvalidArgument(
        "logits and labels must be 2-D [batch, classes], got logits "
        "shape ",
        features.DebugString(), " and labels shape ", labels.DebugString());
  }
  PartialTensorShape backprop;
  if (!BroadcastShapes(features.unknown_rank() ? PartialTensorShape::UnknownDims(2) : features,
                       labels.unknown_rank() ? PartialTensorShape::UnknownDims(2) : labels,
                       &backprop)
           .ok()) {
    return errors::InvalidArgument(
        "logits and labels must have the same shape or broadcast to one, got "
        "logits shape ",
        features.DebugString(), " and labels shape ", labels.DebugString());
  }
  c->set_output(0, PartialTensorShape({backprop.dim_size(0)}));
  c->set_output(1, std::move(backprop));
  return absl::OkStatus();
}

absl::Status SparseSoftmaxCrossEntropyShape(InferenceContext* c) {
  const PartialTensorShape& features = c->input(0);
  const PartialTensorShape& labels = c->input(1);
  if ((!features.unknown_rank() && features.dims() != 2) ||
      (!labels.unknown_rank() && labels.dims() != 1)) {
    return errors::InvalidArgument(
        "logits must be 2-D [batch, classes] and labels 1-D [batch], got "
        "logits shape ",
        features.DebugString(), " and labels shape ", labels.DebugString());
  }
  const int64_t batch_f = features.unknown_rank() ? -1 : features.dim_size(0);
  const int64_t batch_l = labels.unknown_rank() ? -1 : labels.dim_size(0);
  if (batch_f >= 0 && batch_l >= 0 && batch_f != batch_l) {
    return errors::InvalidArgument(
        "logits and labels must have the same first dimension, got logits "
        "shape ",
        features.DebugString(), " and labels shape ", labels.DebugString());
  }
  const int64_t batch = batch_f >= 0 ? batch_f : batch_l;
  const int64_t classes = features.unknown_rank() ? -1 : features.dim_size(1);
  c->set_output(0, PartialTensorShape({batch}));
  c->set_output(1, PartialTensorShape({batch, classes}));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("Relu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: realnumbertypes")
    .SetShapeFn(UnchangedShape)
    .Doc("Rectified linear: max(features, 0).");

REGISTER_OP("ReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: realnumbertypes")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("gradients * (features > 0).");

REGISTER_OP("Relu6")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: realnumbertypes")
    .SetShapeFn(UnchangedShape)
    .Doc("Rectified linear 6: min(max(features, 0), 6).");

REGISTER_OP("Relu6Grad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: realnumbertypes")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("gradients * (0 < features < 6).");

REGISTER_OP("Elu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(UnchangedShape)
    .Doc("Exponential linear: exp(features) - 1 if < 0, features otherwise.");

REGISTER_OP("EluGrad")
    .Input("gradients: T")
    .Input("outputs: T")
    .Output("backprops: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("gradients * (outputs + 1) if outputs < 0, gradients otherwise.");

REGISTER_OP("Softplus")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(UnchangedShape)
    .Doc("log(exp(features) + 1).");

REGISTER_OP("SoftplusGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(MergeBothInputsShape)
    .Doc("gradients / (1 + exp(-features)).");

REGISTER_OP("BiasAdd")
    .Input("value: T")
    .Input("bias: T")
    .Output("output: T")
    .Attr("T: numbertypes")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .SetShapeFn(BiasAddShape)
    .Doc("Adds the 1-D bias along the channel dimension of value.");

REGISTER_OP("BiasAddGrad")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: numbertypes")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .SetShapeFn(BiasAddGradShape)
    .Doc("Sums out_backprop over every dimension but the channel dimension.");

REGISTER_OP("Softmax")
    .Input("logits: T")
    .Output("softmax: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(SoftmaxShape)
    .Doc("exp(logits) / sum(exp(logits)) along the last dimension.");

REGISTER_OP("LogSoftmax")
    .Input("logits: T")
    .Output("logsoftmax: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(SoftmaxShape)
    .Doc("logits - log(sum(exp(logits))) along the last dimension.");

REGISTER_OP("SoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: T")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(SoftmaxCrossEntropyShape)
    .Doc(
        "Per-row cross-entropy of softmax(features) against label "
        "distributions.");

REGISTER_OP("SparseSoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: Tlabels")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("Tlabels: {int32, int64} = DT_INT64")
    .SetShapeFn(SparseSoftmaxCrossEntropyShape)
    .Doc("Per-row cross-entropy of softmax(features) against class indices.");

REGISTER_OP("L2Loss")
    .Input("t: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(ScalarShape)
    .Doc("sum(t ** 2) / 2.");

}  // namespace distflow
