#include "distflow/cc/ops/array_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::AllOutputs;
using internal::BuildOp;

Placeholder::Placeholder(const Scope& scope, DataType dtype) : Placeholder(scope, dtype, Attrs()) {}
Placeholder::Placeholder(const Scope& scope, DataType dtype, const Attrs& attrs)
    : operation(BuildOp(scope, "Placeholder", {}, {{"dtype", dtype}, {"shape", attrs.shape_}})),
      output(operation.output(0)) {}

PlaceholderWithDefault::PlaceholderWithDefault(const Scope& scope, Input input,
                                               const PartialTensorShape& shape)
    : operation(BuildOp(scope, "PlaceholderWithDefault", {input}, {{"shape", shape}})),
      output(operation.output(0)) {}

Identity::Identity(const Scope& scope, Input input)
    : operation(BuildOp(scope, "Identity", {input})), output(operation.output(0)) {}

IdentityN::IdentityN(const Scope& scope, InputList input)
    : operation(BuildOp(scope, "IdentityN", {input})), output(AllOutputs(operation)) {}

StopGradient::StopGradient(const Scope& scope, Input input)
    : operation(BuildOp(scope, "StopGradient", {input})), output(operation.output(0)) {}

Reshape::Reshape(const Scope& scope, Input tensor, Input shape)
    : operation(BuildOp(scope, "Reshape", {tensor, shape})), output(operation.output(0)) {}

Shape::Shape(const Scope& scope, Input input) : Shape(scope, input, Attrs()) {}
Shape::Shape(const Scope& scope, Input input, const Attrs& attrs)
    : operation(BuildOp(scope, "Shape", {input}, {{"out_type", attrs.out_type_}})),
      output(operation.output(0)) {}

Size::Size(const Scope& scope, Input input) : Size(scope, input, Attrs()) {}
Size::Size(const Scope& scope, Input input, const Attrs& attrs)
    : operation(BuildOp(scope, "Size", {input}, {{"out_type", attrs.out_type_}})),
      output(operation.output(0)) {}

Rank::Rank(const Scope& scope, Input input)
    : operation(BuildOp(scope, "Rank", {input})), output(operation.output(0)) {}

Fill::Fill(const Scope& scope, Input dims, Input value)
    : operation(BuildOp(scope, "Fill", {dims, value})), output(operation.output(0)) {}

ZerosLike::ZerosLike(const Scope& scope, Input x)
    : operation(BuildOp(scope, "ZerosLike", {x})), y(operation.output(0)) {}

OnesLike::OnesLike(const Scope& scope, Input x)
    : operation(BuildOp(scope, "OnesLike", {x})), y(operation.output(0)) {}

Transpose::Transpose(const Scope& scope, Input x, Input perm)
    : operation(BuildOp(scope, "Transpose", {x, perm})), y(operation.output(0)) {}

Concat::Concat(const Scope& scope, InputList values, Input axis)
    : operation(BuildOp(scope, "ConcatV2", {values, axis})), output(operation.output(0)) {}

Stack::Stack(const Scope& scope, InputList values) : Stack(scope, values, Attrs()) {}
Stack::Stack(const Scope& scope, InputList values, const Attrs& attrs)
    : operation(BuildOp(scope, "Pack", {values}, {{"axis", attrs.axis_}})),
      output(operation.output(0)) {}

Unstack::Unstack(const Scope& scope, Input value, int64_t num)
    : Unstack(scope, value, num, Attrs()) {}
Unstack::Unstack(const Scope& scope, Input value, int64_t num, const Attrs& attrs)
    : operation(BuildOp(scope, "Unpack", {value}, {{"num", num}, {"axis", attrs.axis_}})),
      output(AllOutputs(operation)) {}

Split::Split(const Scope& scope, Input axis, Input value, int64_t num_split)
    : operation(BuildOp(scope, "Split", {axis, value}, {{"num_split", num_split}})),
      output(AllOutputs(operation)) {}

Slice::Slice(const Scope& scope, Input input, Input begin, Input size)
    : operation(BuildOp(scope, "Slice", {input, begin, size})), output(operation.output(0)) {}

StridedSlice::StridedSlice(const Scope& scope, Input input, Input begin, Input end, Input strides)
    : StridedSlice(scope, input, begin, end, strides, Attrs()) {}
StridedSlice::StridedSlice(const Scope& scope, Input input, Input begin, Input end, Input strides,
                           const Attrs& attrs)
    : operation(BuildOp(scope, "StridedSlice", {input, begin, end, strides},
                        {{"begin_mask", attrs.begin_mask_},
                         {"end_mask", attrs.end_mask_},
                         {"ellipsis_mask", attrs.ellipsis_mask_},
                         {"new_axis_mask", attrs.new_axis_mask_},
                         {"shrink_axis_mask", attrs.shrink_axis_mask_}})),
      output(operation.output(0)) {}

ExpandDims::ExpandDims(const Scope& scope, Input input, Input axis)
    : operation(BuildOp(scope, "ExpandDims", {input, axis})), output(operation.output(0)) {}

Squeeze::Squeeze(const Scope& scope, Input input) : Squeeze(scope, input, Attrs()) {}
Squeeze::Squeeze(const Scope& scope, Input input, const Attrs& attrs)
    : operation(BuildOp(scope, "Squeeze", {input}, {{"squeeze_dims", attrs.axis_}})),
      output(operation.output(0)) {}

Tile::Tile(const Scope& scope, Input input, Input multiples)
    : operation(BuildOp(scope, "Tile", {input, multiples})), output(operation.output(0)) {}

GatherV2::GatherV2(const Scope& scope, Input params, Input indices, Input axis)
    : GatherV2(scope, params, indices, axis, Attrs()) {}
GatherV2::GatherV2(const Scope& scope, Input params, Input indices, Input axis, const Attrs& attrs)
    : operation(
          BuildOp(scope, "GatherV2", {params, indices, axis}, {{"batch_dims", attrs.batch_dims_}})),
      output(operation.output(0)) {}

Gather::Gather(const Scope& scope, Input params, Input indices)
    : operation(GatherV2(scope, params, indices, 0).operation), output(operation.output(0)) {}

OneHot::OneHot(const Scope& scope, Input indices, Input depth, Input on_value, Input off_value)
    : OneHot(scope, indices, depth, on_value, off_value, Attrs()) {}
OneHot::OneHot(const Scope& scope, Input indices, Input depth, Input on_value, Input off_value,
               const Attrs& attrs)
    : operation(
          BuildOp(scope, "OneHot", {indices, depth, on_value, off_value}, {{"axis", attrs.axis_}})),
      output(operation.output(0)) {}

}  // namespace ops
}  // namespace distflow
