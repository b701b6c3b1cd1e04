// The image ops of convolutional networks, NHWC: Conv2D and its two
// backprops, MaxPool/MaxPoolGrad and AvgPool/AvgPoolGrad. Names, inputs,
// outputs and attrs follow TensorFlow's; padding SAME gives
// ceil(in / stride) outputs per spatial dimension, VALID
// ceil((in - window + 1) / stride).
#include <string>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// One spatial output size, or -1 when the input size is unknown.
int64_t WindowedSize(int64_t in, int64_t window, int64_t stride, const std::string& padding) {
  if (in < 0 || stride <= 0) return -1;
  if (padding == "VALID") return in < window ? 0 : (in - window) / stride + 1;
  return (in + stride - 1) / stride;
}

// [batch, out_rows, out_cols, channels] from a rank-4 input and the window
// (rows, cols) of the op.
absl::Status WindowedShape(InferenceContext* c, int64_t rows, int64_t cols, int64_t channels) {
  PartialTensorShape in;
  DF_RETURN_IF_ERROR(c->WithRank(0, 4, &in));
  std::vector<int32_t> strides;
  std::string padding;
  DF_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
  DF_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
  if (strides.size() != 4) {
    return errors::InvalidArgument("strides must have 4 entries (NHWC), got ", strides.size());
  }
  if (in.unknown_rank()) return UnknownShape(c);
  c->set_output(0, PartialTensorShape({in.dim_size(0),
                                       WindowedSize(in.dim_size(1), rows, strides[1], padding),
                                       WindowedSize(in.dim_size(2), cols, strides[2], padding),
                                       channels < 0 ? in.dim_size(3) : channels}));
  return absl::OkStatus();
}

absl::Status Conv2DShape(InferenceContext* c) {
  PartialTensorShape filter;
  DF_RETURN_IF_ERROR(c->WithRank(1, 4, &filter));
  if (filter.unknown_rank()) return WindowedShape(c, -1, -1, -1);
  return WindowedShape(c, filter.dim_size(0), filter.dim_size(1), filter.dim_size(3));
}

absl::Status PoolShape(InferenceContext* c) {
  std::vector<int32_t> ksize;
  DF_RETURN_IF_ERROR(c->GetAttr("ksize", &ksize));
  if (ksize.size() != 4) {
    return errors::InvalidArgument("ksize must have 4 entries (NHWC), got ", ksize.size());
  }
  return WindowedShape(c, ksize[1], ksize[2], -1);
}

// The output has the shape held by int32 vector input `index`.
absl::Status ShapeFromInput(InferenceContext* c, int index) {
  PartialTensorShape s;
  DF_RETURN_IF_ERROR(c->ShapeFromShapeTensor(index, &s));
  c->set_output(0, s);
  return absl::OkStatus();
}

absl::Status Conv2DBackpropInputShape(InferenceContext* c) { return ShapeFromInput(c, 0); }
absl::Status Conv2DBackpropFilterShape(InferenceContext* c) { return ShapeFromInput(c, 1); }
absl::Status AvgPoolGradShape(InferenceContext* c) { return ShapeFromInput(c, 0); }

}  // namespace

REGISTER_OP("Conv2D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DShape)
    .Doc("2-D convolution of [batch, rows, cols, in] by [fh, fw, in, out] filters.");

REGISTER_OP("Conv2DBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DBackpropInputShape)
    .Doc("The gradient of Conv2D with respect to its input.");

REGISTER_OP("Conv2DBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DBackpropFilterShape)
    .Doc("The gradient of Conv2D with respect to its filter.");

REGISTER_OP("MaxPool")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8} = DT_FLOAT")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .SetShapeFn(PoolShape)
    .Doc("The maximum of each window.");

REGISTER_OP("MaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8} = DT_FLOAT")
    .SetShapeFn(UnchangedShape)
    .Doc("MaxPool's gradient: each window's gradient goes to its (first) maximum.");

REGISTER_OP("AvgPool")
    .Input("value: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(PoolShape)
    .Doc("The mean of each window's elements inside the input (padding not counted).");

REGISTER_OP("AvgPoolGrad")
    .Input("orig_input_shape: int32")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {half, bfloat16, float, double}")
    .SetShapeFn(AvgPoolGradShape)
    .Doc("AvgPool's gradient: each window's gradient spread evenly over its elements.");

}  // namespace distflow
