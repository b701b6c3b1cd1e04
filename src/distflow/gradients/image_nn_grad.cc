// Gradient functions of the image ops: Conv2D (through its two backprop
// ops), MaxPool (MaxPoolGrad) and AvgPool (AvgPoolGrad), each with the
// forward op's strides, window and padding; FusedBatchNormV3
// (FusedBatchNormGradV3 with its epsilon and mode). The gradient ops themselves
// have no gradients.
#include <string>
#include <vector>

#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/image_nn_ops.h"
#include "distflow/core/status.h"
#include "distflow/gradients/grad_op_registry.h"
#include "distflow/gradients/gradients.h"

namespace distflow {
namespace {

// The forward op's window attrs; ksize is empty for Conv2D.
struct WindowAttrValues {
  std::vector<int32_t> ksize, strides;
  std::string padding, data_format;
};

absl::Status ReadAttrs(const Operation& op, bool pooling, WindowAttrValues* out) {
  const AttrSlice attrs = op.node()->attrs();
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "strides", &out->strides));
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "padding", &out->padding));
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "data_format", &out->data_format));
  if (pooling) DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "ksize", &out->ksize));
  if (out->data_format != "NHWC") {
    return errors::Unimplemented("the gradient of '", op.node()->name(),
                                 "' needs data_format NHWC, got ", out->data_format);
  }
  return absl::OkStatus();
}

absl::Status Conv2DGrad(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  WindowAttrValues a;
  DF_RETURN_IF_ERROR(ReadAttrs(op, false, &a));
  std::vector<int32_t> dilations;
  DF_RETURN_IF_ERROR(GetNodeAttr(op.node()->attrs(), "dilations", &dilations));
  for (int32_t d : dilations) {
    if (d != 1) {
      return errors::Unimplemented("the gradient of '", op.node()->name(),
                                   "' needs dilations of 1");
    }
  }
  const Output input = op.input(0), filter = op.input(1);
  grad_outputs->push_back(ops::Conv2DBackpropInput(scope, ops::Shape(scope, input), filter,
                                                   grad_inputs[0], a.strides, a.padding));
  grad_outputs->push_back(ops::Conv2DBackpropFilter(scope, input, ops::Shape(scope, filter),
                                                    grad_inputs[0], a.strides, a.padding));
  return scope.status();
}
REGISTER_GRADIENT_OP("Conv2D", Conv2DGrad);

absl::Status MaxPoolGradFn(const Scope& scope, const Operation& op,
                           const std::vector<Output>& grad_inputs,
                           std::vector<Output>* grad_outputs) {
  WindowAttrValues a;
  DF_RETURN_IF_ERROR(ReadAttrs(op, true, &a));
  grad_outputs->push_back(ops::MaxPoolGrad(scope, op.input(0), op.output(0), grad_inputs[0],
                                           a.ksize, a.strides, a.padding));
  return scope.status();
}
REGISTER_GRADIENT_OP("MaxPool", MaxPoolGradFn);

absl::Status AvgPoolGradFn(const Scope& scope, const Operation& op,
                           const std::vector<Output>& grad_inputs,
                           std::vector<Output>* grad_outputs) {
  WindowAttrValues a;
  DF_RETURN_IF_ERROR(ReadAttrs(op, true, &a));
  grad_outputs->push_back(ops::AvgPoolGrad(scope, ops::Shape(scope, op.input(0)), grad_inputs[0],
                                           a.ksize, a.strides, a.padding));
  return scope.status();
}
REGISTER_GRADIENT_OP("AvgPool", AvgPoolGradFn);

// Gradients for x, scale and offset; none for the running mean and
// variance (in training they only feed the running outputs).
absl::Status FusedBatchNormV3Grad(const Scope& scope, const Operation& op,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Output>* grad_outputs) {
  const AttrSlice attrs = op.node()->attrs();
  float epsilon;
  bool is_training;
  std::string data_format;
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "epsilon", &epsilon));
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "is_training", &is_training));
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "data_format", &data_format));
  if (data_format != "NHWC") {
    return errors::Unimplemented("the gradient of '", op.node()->name(),
                                 "' needs data_format NHWC, got ", data_format);
  }
  ops::FusedBatchNormGradV3 grad(scope, grad_inputs[0], op.input(0), op.input(1), op.output(3),
                                 op.output(4), op.output(5), epsilon, is_training);
  *grad_outputs = {grad.x_backprop, grad.scale_backprop, grad.offset_backprop, NoGradient(),
                   NoGradient()};
  return scope.status();
}
REGISTER_GRADIENT_OP("FusedBatchNormV3", FusedBatchNormV3Grad);

}  // namespace
}  // namespace distflow
