#include "distflow/cc/ops/grad_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::BuildOp;

SigmoidGrad::SigmoidGrad(const Scope& scope, Input y, Input dy)
    : operation(BuildOp(scope, "SigmoidGrad", {y, dy})), z(operation.output(0)) {}

TanhGrad::TanhGrad(const Scope& scope, Input y, Input dy)
    : operation(BuildOp(scope, "TanhGrad", {y, dy})), z(operation.output(0)) {}

SqrtGrad::SqrtGrad(const Scope& scope, Input y, Input dy)
    : operation(BuildOp(scope, "SqrtGrad", {y, dy})), z(operation.output(0)) {}

RsqrtGrad::RsqrtGrad(const Scope& scope, Input y, Input dy)
    : operation(BuildOp(scope, "RsqrtGrad", {y, dy})), z(operation.output(0)) {}

ReluGrad::ReluGrad(const Scope& scope, Input gradients, Input features)
    : operation(BuildOp(scope, "ReluGrad", {gradients, features})),
      backprops(operation.output(0)) {}

Relu6Grad::Relu6Grad(const Scope& scope, Input gradients, Input features)
    : operation(BuildOp(scope, "Relu6Grad", {gradients, features})),
      backprops(operation.output(0)) {}

EluGrad::EluGrad(const Scope& scope, Input gradients, Input outputs)
    : operation(BuildOp(scope, "EluGrad", {gradients, outputs})), backprops(operation.output(0)) {}

SoftplusGrad::SoftplusGrad(const Scope& scope, Input gradients, Input features)
    : operation(BuildOp(scope, "SoftplusGrad", {gradients, features})),
      backprops(operation.output(0)) {}

BiasAddGrad::BiasAddGrad(const Scope& scope, Input out_backprop)
    : BiasAddGrad(scope, out_backprop, Attrs()) {}
BiasAddGrad::BiasAddGrad(const Scope& scope, Input out_backprop, const Attrs& attrs)
    : operation(
          BuildOp(scope, "BiasAddGrad", {out_backprop}, {{"data_format", attrs.data_format_}})),
      output(operation.output(0)) {}

BroadcastGradientArgs::BroadcastGradientArgs(const Scope& scope, Input s0, Input s1)
    : operation(BuildOp(scope, "BroadcastGradientArgs", {s0, s1})),
      r0(operation.output(0)),
      r1(operation.output(1)) {}

StridedSliceGrad::StridedSliceGrad(const Scope& scope, Input shape, Input begin, Input end,
                                   Input strides, Input dy)
    : StridedSliceGrad(scope, shape, begin, end, strides, dy, Attrs()) {}
StridedSliceGrad::StridedSliceGrad(const Scope& scope, Input shape, Input begin, Input end,
                                   Input strides, Input dy, const Attrs& attrs)
    : operation(BuildOp(scope, "StridedSliceGrad", {shape, begin, end, strides, dy},
                        {{"begin_mask", attrs.begin_mask_},
                         {"end_mask", attrs.end_mask_},
                         {"ellipsis_mask", attrs.ellipsis_mask_},
                         {"new_axis_mask", attrs.new_axis_mask_},
                         {"shrink_axis_mask", attrs.shrink_axis_mask_}})),
      output(operation.output(0)) {}

UnsortedSegmentSum::UnsortedSegmentSum(const Scope& scope, Input data, Input segment_ids,
                                       Input num_segments)
    : operation(BuildOp(scope, "UnsortedSegmentSum", {data, segment_ids, num_segments})),
      output(operation.output(0)) {}

InvertPermutation::InvertPermutation(const Scope& scope, Input x)
    : operation(BuildOp(scope, "InvertPermutation", {x})), y(operation.output(0)) {}

}  // namespace ops
}  // namespace distflow
