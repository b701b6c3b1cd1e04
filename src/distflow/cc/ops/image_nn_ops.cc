#include "distflow/cc/ops/image_nn_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::BuildOp;

ImageOpOutput::ImageOpOutput(Node* node) : operation(node), output(operation.output(0)) {}

Conv2D::Conv2D(const Scope& scope, Input input, Input filter, const std::vector<int32_t>& strides,
               const std::string& padding)
    : ImageOpOutput(BuildOp(scope, "Conv2D", {input, filter},
                            {{"strides", strides}, {"padding", padding}})) {}

Conv2DBackpropInput::Conv2DBackpropInput(const Scope& scope, Input input_sizes, Input filter,
                                         Input out_backprop, const std::vector<int32_t>& strides,
                                         const std::string& padding)
    : ImageOpOutput(BuildOp(scope, "Conv2DBackpropInput", {input_sizes, filter, out_backprop},
                            {{"strides", strides}, {"padding", padding}})) {}

Conv2DBackpropFilter::Conv2DBackpropFilter(const Scope& scope, Input input, Input filter_sizes,
                                           Input out_backprop, const std::vector<int32_t>& strides,
                                           const std::string& padding)
    : ImageOpOutput(BuildOp(scope, "Conv2DBackpropFilter", {input, filter_sizes, out_backprop},
                            {{"strides", strides}, {"padding", padding}})) {}

MaxPool::MaxPool(const Scope& scope, Input input, const std::vector<int32_t>& ksize,
                 const std::vector<int32_t>& strides, const std::string& padding)
    : ImageOpOutput(BuildOp(scope, "MaxPool", {input},
                            {{"ksize", ksize}, {"strides", strides}, {"padding", padding}})) {}

MaxPoolGrad::MaxPoolGrad(const Scope& scope, Input orig_input, Input orig_output, Input grad,
                         const std::vector<int32_t>& ksize, const std::vector<int32_t>& strides,
                         const std::string& padding)
    : ImageOpOutput(BuildOp(scope, "MaxPoolGrad", {orig_input, orig_output, grad},
                            {{"ksize", ksize}, {"strides", strides}, {"padding", padding}})) {}

AvgPool::AvgPool(const Scope& scope, Input value, const std::vector<int32_t>& ksize,
                 const std::vector<int32_t>& strides, const std::string& padding)
    : ImageOpOutput(BuildOp(scope, "AvgPool", {value},
                            {{"ksize", ksize}, {"strides", strides}, {"padding", padding}})) {}

AvgPoolGrad::AvgPoolGrad(const Scope& scope, Input orig_input_shape, Input grad,
                         const std::vector<int32_t>& ksize, const std::vector<int32_t>& strides,
                         const std::string& padding)
    : ImageOpOutput(BuildOp(scope, "AvgPoolGrad", {orig_input_shape, grad},
                            {{"ksize", ksize}, {"strides", strides}, {"padding", padding}})) {}

FusedBatchNormV3::FusedBatchNormV3(const Scope& scope, Input x, Input scale, Input offset,
                                   Input mean, Input variance, const Attrs& attrs)
    : operation(BuildOp(scope, "FusedBatchNormV3", {x, scale, offset, mean, variance},
                        {{"epsilon", attrs.epsilon},
                         {"exponential_avg_factor", attrs.exponential_avg_factor},
                         {"is_training", attrs.is_training}})),
      y(operation.output(0)),
      batch_mean(operation.output(1)),
      batch_variance(operation.output(2)),
      reserve_space_1(operation.output(3)),
      reserve_space_2(operation.output(4)),
      reserve_space_3(operation.output(5)) {}

FusedBatchNormGradV3::FusedBatchNormGradV3(const Scope& scope, Input y_backprop, Input x,
                                           Input scale, Input reserve_space_1,
                                           Input reserve_space_2, Input reserve_space_3,
                                           float epsilon, bool is_training)
    : operation(BuildOp(scope, "FusedBatchNormGradV3",
                        {y_backprop, x, scale, reserve_space_1, reserve_space_2, reserve_space_3},
                        {{"epsilon", epsilon}, {"is_training", is_training}})),
      x_backprop(operation.output(0)),
      scale_backprop(operation.output(1)),
      offset_backprop(operation.output(2)) {}

}  // namespace ops
}  // namespace distflow
