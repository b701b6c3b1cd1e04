// Conditional control flow, as TensorFlow's tf.cond builds it in a GraphDef:
// Switch routes a value to one of two outputs and leaves the other dead;
// Merge forwards whichever input is alive. Loops (Enter, Exit,
// NextIteration, LoopCond) are not supported yet: the executor rejects them.
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

absl::Status SwitchShape(InferenceContext* c) {
  const PartialTensorShape& pred = c->input(1);
  if (!pred.unknown_rank() && pred.dims() != 0) {
    return errors::InvalidArgument("pred must be a scalar, got shape ", pred.DebugString());
  }
  c->set_output(0, c->input(0));
  c->set_output(1, c->input(0));
  return absl::OkStatus();
}

absl::Status MergeShape(InferenceContext* c) {
  PartialTensorShape out = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    if (!c->input(i).IsIdenticalTo(out)) {
      out = PartialTensorShape::Unknown();
      break;
    }
  }
  c->set_output(0, out);
  c->set_output(1, PartialTensorShape({}));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("Switch")
    .Input("data: T")
    .Input("pred: bool")
    .Output("output_false: T")
    .Output("output_true: T")
    .Attr("T: type")
    .SetShapeFn(SwitchShape)
    .Doc(
        "Forwards data to output_true when pred is true, else to output_false; the other "
        "output is dead.");

REGISTER_OP("Merge")
    .Input("inputs: N * T")
    .Output("output: T")
    .Output("value_index: int32")
    .Attr("T: type")
    .Attr("N: int >= 1")
    .SetShapeFn(MergeShape)
    .Doc("Forwards the first input that is alive and its index; dead when every input is.");

}  // namespace distflow
