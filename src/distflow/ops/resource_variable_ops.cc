// Resource variables: VarHandleOp names a variable in its device's
// ResourceMgr (a scalar DT_RESOURCE handle carrying the declared dtype and
// shape); the other ops read, assign, update, gather from and destroy the
// variable the handle names. Names, inputs, outputs and attrs follow
// TensorFlow's. Ops that touch a variable are stateful: they must never be
// folded or merged.
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// Every op here takes the handle as input 0, a scalar.
absl::Status HandleIsScalar(InferenceContext* c) { return c->WithScalar(0); }

absl::Status HandleAndNoOutputs(InferenceContext* c) {
  DF_RETURN_IF_ERROR(HandleIsScalar(c));
  return NoOutputs(c);
}

absl::Status HandleAndUnknownOutput(InferenceContext* c) {
  DF_RETURN_IF_ERROR(HandleIsScalar(c));
  return UnknownShape(c);
}

absl::Status HandleAndScalarOutput(InferenceContext* c) {
  DF_RETURN_IF_ERROR(HandleIsScalar(c));
  return ScalarShape(c);
}

// indices.shape + params.shape[1:], with params' shape unknown here.
absl::Status ResourceGatherShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(HandleIsScalar(c));
  int64_t batch_dims;
  DF_RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
  if (batch_dims != 0) {
    return errors::Unimplemented("ResourceGather supports batch_dims 0 only, got ", batch_dims);
  }
  c->set_output(0, PartialTensorShape::Unknown());
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("VarHandleOp")
    .Output("resource: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Attr("allowed_devices: list(string) = []")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc(
        "A handle to the variable named shared_name (empty: the node's name) "
        "in "
        "container on this device; the variable exists once assigned.");

REGISTER_OP("ReadVariableOp")
    .Input("resource: resource")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(HandleAndUnknownOutput)
    .Doc("The variable's current value; FailedPrecondition when uninitialized.");

REGISTER_OP("AssignVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .Attr("validate_shape: bool = false")
    .SetIsStateful()
    .SetShapeFn(HandleAndNoOutputs)
    .Doc(
        "Sets the variable to value, creating it when needed. The value must "
        "have the handle's declared dtype and a shape compatible with its "
        "declared shape.");

REGISTER_OP("AssignAddVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(HandleAndNoOutputs)
    .Doc("variable += value.");

REGISTER_OP("AssignSubVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .SetIsStateful()
    .SetShapeFn(HandleAndNoOutputs)
    .Doc("variable -= value.");

REGISTER_OP("VarIsInitializedOp")
    .Input("resource: resource")
    .Output("is_initialized: bool")
    .SetIsStateful()
    .SetShapeFn(HandleAndScalarOutput)
    .Doc("True iff the variable exists and holds a value.");

REGISTER_OP("DestroyResourceOp")
    .Input("resource: resource")
    .Attr("ignore_lookup_error: bool = true")
    .SetIsStateful()
    .SetShapeFn(HandleAndNoOutputs)
    .Doc(
        "Removes the resource from its device's ResourceMgr; NotFound when "
        "absent unless ignore_lookup_error.");

REGISTER_OP("ResourceGather")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Output("output: dtype")
    .Attr("batch_dims: int = 0")
    .Attr("validate_indices: bool = true")
    .Attr("dtype: type")
    .Attr("Tindices: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(ResourceGatherShape)
    .Doc("Rows of the variable: output[i, ...] = variable[indices[i], ...].");

REGISTER_OP("ResourceScatterAdd")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Input("updates: dtype")
    .Attr("dtype: numbertypes")
    .Attr("Tindices: {int32, int64}")
    .SetIsStateful()
    .SetShapeFn(HandleAndNoOutputs)
    .Doc(
        "variable[indices[i], ...] += updates[i, ...]; repeated indices add "
        "up. "
        "No row changes unless every index is valid.");

}  // namespace distflow
