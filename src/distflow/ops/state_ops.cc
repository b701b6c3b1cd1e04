// Reference variables (TensorFlow 1 style): VariableV2 owns a tensor that
// lives in its device's ResourceMgr across steps and hands out a reference
// (Ref(dtype)) to it; Assign, AssignAdd and AssignSub update it through that
// reference; IsVariableInitialized tells whether it was ever assigned.
// Names, inputs, outputs and attrs follow TensorFlow's.
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

absl::Status VariableShape(InferenceContext* c) {
  PartialTensorShape shape;
  DF_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  c->set_output(0, shape);
  return absl::OkStatus();
}

// Output 0 is inputs 0 and 1 merged: an update keeps the variable's shape.
absl::Status MergedRefAndValueShape(InferenceContext* c) {
  PartialTensorShape merged;
  DF_RETURN_IF_ERROR(c->input(0).MergeWith(c->input(1), &merged));
  c->set_output(0, merged);
  return absl::OkStatus();
}

absl::Status AssignShape(InferenceContext* c) {
  bool validate_shape;
  DF_RETURN_IF_ERROR(c->GetAttr("validate_shape", &validate_shape));
  if (validate_shape) return MergedRefAndValueShape(c);
  c->set_output(0, c->input(1));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("VariableV2")
    .Output("ref: Ref(dtype)")
    .Attr("shape: shape")
    .Attr("dtype: type")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(VariableShape)
    .Doc(
        "A variable: a tensor kept in the device's ResourceMgr (container, "
        "shared_name or the node's name) across steps, output by reference.");

// TensorFlow's first variable op, still in graphs written before VariableV2;
// the same op under its old name.
REGISTER_OP("Variable")
    .Output("ref: Ref(dtype)")
    .Attr("shape: shape")
    .Attr("dtype: type")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(VariableShape)
    .Doc("The legacy name of VariableV2.");

REGISTER_OP("Assign")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: type")
    .Attr("validate_shape: bool = true")
    .Attr("use_locking: bool = true")
    .SetAllowsUninitializedInput()
    .SetShapeFn(AssignShape)
    .Doc(
        "Sets ref to value; with validate_shape, value must have ref's shape. "
        "Outputs ref.");

REGISTER_OP("AssignAdd")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: numbertypes")
    .Attr("use_locking: bool = false")
    .SetShapeFn(MergedRefAndValueShape)
    .Doc("ref += value. Outputs ref.");

REGISTER_OP("AssignSub")
    .Input("ref: Ref(T)")
    .Input("value: T")
    .Output("output_ref: Ref(T)")
    .Attr("T: numbertypes")
    .Attr("use_locking: bool = false")
    .SetShapeFn(MergedRefAndValueShape)
    .Doc("ref -= value. Outputs ref.");

REGISTER_OP("IsVariableInitialized")
    .Input("ref: Ref(dtype)")
    .Output("is_initialized: bool")
    .Attr("dtype: type")
    .SetAllowsUninitializedInput()
    .SetShapeFn(ScalarShape)
    .Doc("True iff the variable ref has been assigned a value.");

}  // namespace distflow
