// Gradient functions of the array ops: identities, reshaping, transposition,
// concatenation and splitting, slicing (through StridedSliceGrad), Tile,
// GatherV2 (a dense scatter-add through UnsortedSegmentSum) and Fill; and
// the registrations of the ops no gradient flows through (constants,
// placeholders, shapes, ZerosLike/OnesLike, OneHot, StopGradient).
#include <cstdint>
#include <vector>

#include "distflow/cc/const_op.h"
#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/grad_ops.h"
#include "distflow/cc/ops/math_ops.h"
#include "distflow/core/status.h"
#include "distflow/gradients/grad_helpers.h"
#include "distflow/gradients/grad_op_registry.h"
#include "distflow/gradients/gradients.h"

namespace distflow {
namespace {

// Ops whose data inputs are passed through unchanged.
absl::Status PassThroughGrad(const Scope& /*scope*/, const Operation& /*op*/,
                             const std::vector<Output>& grad_inputs,
                             std::vector<Output>* grad_outputs) {
  *grad_outputs = grad_inputs;
  return absl::OkStatus();
}
REGISTER_GRADIENT_OP("Identity", PassThroughGrad);
REGISTER_GRADIENT_OP("IdentityN", PassThroughGrad);
REGISTER_GRADIENT_OP("PlaceholderWithDefault", PassThroughGrad);

// Ops that only change the shape: the gradient is reshaped back; the shape
// or axis input has none.
absl::Status ReshapeGrad(const Scope& scope, const Operation& op,
                         const std::vector<Output>& grad_inputs,
                         std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::Reshape(scope, grad_inputs[0], ops::Shape(scope, op.input(0))));
  grad_outputs->resize(op.num_inputs(), NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("Reshape", ReshapeGrad);
REGISTER_GRADIENT_OP("ExpandDims", ReshapeGrad);
REGISTER_GRADIENT_OP("Squeeze", ReshapeGrad);

absl::Status TransposeGrad(const Scope& scope, const Operation& op,
                           const std::vector<Output>& grad_inputs,
                           std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(
      ops::Transpose(scope, grad_inputs[0], ops::InvertPermutation(scope, op.input(1))));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("Transpose", TransposeGrad);

// ConcatV2(values..., axis): value i's gradient is the slice of the incoming
// gradient that starts at the sum of the earlier values' sizes along the
// axis and has value i's shape.
absl::Status ConcatV2Grad(const Scope& scope, const Operation& op,
                          const std::vector<Output>& grad_inputs,
                          std::vector<Output>* grad_outputs) {
  const int n = op.num_inputs() - 1;
  const Output& g = grad_inputs[0];
  const Output rank = ops::Rank(scope, g);
  Output axis = op.input(n);
  if (op.input_type(n) != DT_INT32) axis = ops::Cast(scope, axis, DT_INT32);
  axis = ops::FloorMod(scope, axis, rank);
  Output offset = ops::Const(scope, 0);
  for (int i = 0; i < n; ++i) {
    const Output shape = ops::Shape(scope, op.input(i));
    const Output begin = ops::OneHot(scope, axis, rank, offset, 0);
    grad_outputs->push_back(ops::Slice(scope, g, begin, shape));
    if (i + 1 < n) {
      offset = ops::AddV2(scope, offset, ops::GatherV2(scope, shape, axis, 0));
    }
  }
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("ConcatV2", ConcatV2Grad);

absl::Status PackGrad(const Scope& scope, const Operation& op,
                      const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  int64_t axis = 0;
  DF_RETURN_IF_ERROR(GetNodeAttr(op.node()->attrs(), "axis", &axis));
  const ops::Unstack pieces(scope, grad_inputs[0], op.num_inputs(), ops::Unstack::Axis(axis));
  if (!scope.ok()) return scope.status();
  *grad_outputs = pieces.output;
  return absl::OkStatus();
}
REGISTER_GRADIENT_OP("Pack", PackGrad);

// The gradients of a multi-output op's outputs, with zeros for those no
// gradient reached.
std::vector<Output> GradsOrZeros(const Scope& scope, const Operation& op,
                                 const std::vector<Output>& grad_inputs) {
  std::vector<Output> grads = grad_inputs;
  for (int i = 0; i < static_cast<int>(grads.size()); ++i) {
    if (grads[i].node() == nullptr) {
      grads[i] = ops::ZerosLike(scope, op.output(i));
    }
  }
  return grads;
}

absl::Status UnpackGrad(const Scope& scope, const Operation& op,
                        const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  int64_t axis = 0;
  DF_RETURN_IF_ERROR(GetNodeAttr(op.node()->attrs(), "axis", &axis));
  grad_outputs->push_back(
      ops::Stack(scope, GradsOrZeros(scope, op, grad_inputs), ops::Stack::Axis(axis)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Unpack", UnpackGrad);

// Split(split_dim, value).
absl::Status SplitGrad(const Scope& scope, const Operation& op,
                       const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(ops::Concat(scope, GradsOrZeros(scope, op, grad_inputs), op.input(0)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Split", SplitGrad);

// Slice(input, begin, size) is StridedSlice from begin to begin + the
// output's shape with unit strides; its gradient is StridedSliceGrad.
absl::Status SliceGrad(const Scope& scope, const Operation& op,
                       const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output begin = op.input(1);
  const ops::Shape::Attrs index_type = ops::Shape::OutType(op.input_type(1));
  const Output end = ops::AddV2(scope, begin, ops::Shape(scope, op.output(0), index_type));
  grad_outputs->push_back(ops::StridedSliceGrad(scope, ops::Shape(scope, op.input(0), index_type),
                                                begin, end, ops::OnesLike(scope, begin),
                                                grad_inputs[0]));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("Slice", SliceGrad);

// The masks of a StridedSlice or StridedSliceGrad node.
absl::Status GetMasks(const Operation& op, ops::StridedSlice::Attrs* masks) {
  const AttrSlice attrs = op.node()->attrs();
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "begin_mask", &masks->begin_mask_));
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "end_mask", &masks->end_mask_));
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "ellipsis_mask", &masks->ellipsis_mask_));
  DF_RETURN_IF_ERROR(GetNodeAttr(attrs, "new_axis_mask", &masks->new_axis_mask_));
  return GetNodeAttr(attrs, "shrink_axis_mask", &masks->shrink_axis_mask_);
}

absl::Status StridedSliceGradFn(const Scope& scope, const Operation& op,
                                const std::vector<Output>& grad_inputs,
                                std::vector<Output>* grad_outputs) {
  ops::StridedSlice::Attrs masks;
  DF_RETURN_IF_ERROR(GetMasks(op, &masks));
  const Output begin = op.input(1);
  grad_outputs->push_back(ops::StridedSliceGrad(
      scope, ops::Shape(scope, op.input(0), ops::Shape::OutType(op.input_type(1))), begin,
      op.input(2), op.input(3), grad_inputs[0], masks));
  grad_outputs->resize(4, NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("StridedSlice", StridedSliceGradFn);

// StridedSliceGrad(shape, begin, end, strides, dy) writes dy into a box, so
// dy's gradient is that box of the incoming gradient.
absl::Status StridedSliceGradGrad(const Scope& scope, const Operation& op,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Output>* grad_outputs) {
  ops::StridedSlice::Attrs masks;
  DF_RETURN_IF_ERROR(GetMasks(op, &masks));
  grad_outputs->assign(4, NoGradient());
  grad_outputs->push_back(
      ops::StridedSlice(scope, grad_inputs[0], op.input(1), op.input(2), op.input(3), masks));
  return scope.status();
}
REGISTER_GRADIENT_OP("StridedSliceGrad", StridedSliceGradGrad);

// Tile(input, multiples): the output viewed as [m0, d0, m1, d1, ...] holds
// m0 * m1 * ... copies of input; the gradient sums them.
absl::Status TileGrad(const Scope& scope, const Operation& op,
                      const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output multiples = op.input(1);
  const Output shape = ops::Shape(scope, op.input(0), ops::Shape::OutType(op.input_type(1)));
  const Output split_shape = ops::Reshape(
      scope, ops::Transpose(scope, ops::Stack(scope, {multiples, shape}), {1, 0}), {-1});
  const Output axes = ops::Range(scope, 0, ops::Size(scope, split_shape), 2);
  const Output summed = ops::Sum(scope, ops::Reshape(scope, grad_inputs[0], split_shape), axes);
  grad_outputs->push_back(ops::Reshape(scope, summed, shape));
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("Tile", TileGrad);

// GatherV2(params, indices, axis) with batch_dims 0. The incoming gradient
// has shape params[:axis] + indices + params[axis+1:]; viewed as
// [outer, n, inner] and transposed to [n, outer, inner], its rows are
// scatter-added into [params[axis], outer, inner] by UnsortedSegmentSum and
// transposed back into params' shape.
absl::Status GatherV2Grad(const Scope& scope, const Operation& op,
                          const std::vector<Output>& grad_inputs,
                          std::vector<Output>* grad_outputs) {
  int64_t batch_dims = 0;
  DF_RETURN_IF_ERROR(GetNodeAttr(op.node()->attrs(), "batch_dims", &batch_dims));
  if (batch_dims != 0) {
    return errors::Unimplemented("the gradient of GatherV2 supports batch_dims = 0 only, got ",
                                 batch_dims);
  }
  const Output params = op.input(0);
  Output indices = op.input(1);
  if (op.input_type(1) != DT_INT32 && op.input_type(1) != DT_INT64) {
    indices = ops::Cast(scope, indices, DT_INT32);
  }
  Output axis = op.input(2);
  if (op.input_type(2) != DT_INT32) axis = ops::Cast(scope, axis, DT_INT32);
  const Output shape = ops::Shape(scope, params);
  axis = ops::FloorMod(scope, axis, ops::Rank(scope, params));
  const Output axis_vec = ops::Reshape(scope, axis, {1});
  const Output outer = ops::Prod(scope, ops::Slice(scope, shape, {0}, axis_vec), 0);
  const Output inner =
      ops::Prod(scope, ops::Slice(scope, shape, ops::AddV2(scope, axis_vec, 1), {-1}), 0);
  const Output dim = ops::GatherV2(scope, shape, axis, 0);
  const Output values =
      ops::Transpose(scope,
                     ops::Reshape(scope, grad_inputs[0],
                                  ops::Stack(scope, {outer, ops::Size(scope, indices), inner})),
                     {1, 0, 2});
  const Output summed =
      ops::UnsortedSegmentSum(scope, values, ops::Reshape(scope, indices, {-1}), dim);
  grad_outputs->push_back(ops::Reshape(scope, ops::Transpose(scope, summed, {1, 0, 2}), shape));
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(NoGradient());
  return scope.status();
}
REGISTER_GRADIENT_OP("GatherV2", GatherV2Grad);

// Fill(dims, value): every element is `value`, so its gradient is the sum
// of the incoming gradient (as in TensorFlow); dims has none.
absl::Status FillGrad(const Scope& scope, const Operation& /*op*/,
                      const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  const Output& g = grad_inputs[0];
  grad_outputs->push_back(NoGradient());
  grad_outputs->push_back(ops::Sum(scope, g, ops::Range(scope, 0, ops::Rank(scope, g), 1)));
  return scope.status();
}
REGISTER_GRADIENT_OP("Fill", FillGrad);

REGISTER_NO_GRADIENT_OP("Const");
REGISTER_NO_GRADIENT_OP("Placeholder");
REGISTER_NO_GRADIENT_OP("StopGradient");
REGISTER_NO_GRADIENT_OP("Shape");
REGISTER_NO_GRADIENT_OP("Size");
REGISTER_NO_GRADIENT_OP("Rank");
REGISTER_NO_GRADIENT_OP("ZerosLike");
REGISTER_NO_GRADIENT_OP("OnesLike");
REGISTER_NO_GRADIENT_OP("OneHot");
REGISTER_NO_GRADIENT_OP("InvertPermutation");

}  // namespace
}  // namespace distflow
