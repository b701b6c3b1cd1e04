// Control flow as TensorFlow's tf.cond and tf.while_loop write it in a
// GraphDef. Switch routes a value to one of two outputs and leaves the other
// dead; Merge forwards whichever input is alive. A loop is a frame: Enter
// brings a value into the frame named by `frame_name` (every iteration sees it
// when `is_constant`), NextIteration carries a value to the next iteration,
// Exit hands the last iteration's value back to the enclosing frame, and
// LoopCond marks the predicate that drives the loop (the partitioner sends it
// to every device the loop's body spans). The Ref* variants pass references
// to a variable's storage instead of values.
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

absl::Status ForwardShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status LoopCondShape(InferenceContext* c) {
  const PartialTensorShape& pred = c->input(0);
  if (!pred.unknown_rank() && pred.dims() != 0) {
    return errors::InvalidArgument("LoopCond's input must be a scalar, got shape ",
                                   pred.DebugString());
  }
  c->set_output(0, PartialTensorShape({}));
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

REGISTER_OP("RefSwitch")
    .Input("data: Ref(T)")
    .Input("pred: bool")
    .Output("output_false: Ref(T)")
    .Output("output_true: Ref(T)")
    .Attr("T: type")
    .SetAllowsUninitializedInput()
    .SetShapeFn(SwitchShape)
    .Doc("Switch for a reference: forwards the reference to the output pred picks.");

REGISTER_OP("Merge")
    .Input("inputs: N * T")
    .Output("output: T")
    .Output("value_index: int32")
    .Attr("T: type")
    .Attr("N: int >= 1")
    .SetShapeFn(MergeShape)
    .Doc("Forwards the first input that is alive and its index; dead when every input is.");

REGISTER_OP("RefMerge")
    .Input("inputs: Ref(N * T)")
    .Output("output: Ref(T)")
    .Output("value_index: int32")
    .Attr("T: type")
    .Attr("N: int >= 1")
    .SetAllowsUninitializedInput()
    .SetShapeFn(MergeShape)
    .Doc("Merge for references: forwards the first live reference and its index.");

REGISTER_OP("Enter")
    .Input("data: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("frame_name: string")
    .Attr("is_constant: bool = false")
    .Attr("parallel_iterations: int = 10")
    .SetShapeFn(ForwardShape)
    .Doc(
        "Brings data into the loop frame frame_name: into its first iteration, or into every "
        "iteration when is_constant. At most parallel_iterations iterations run at once.");

REGISTER_OP("RefEnter")
    .Input("data: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .Attr("frame_name: string")
    .Attr("is_constant: bool = false")
    .Attr("parallel_iterations: int = 10")
    .SetAllowsUninitializedInput()
    .SetShapeFn(ForwardShape)
    .Doc("Enter for a reference.");

REGISTER_OP("Exit")
    .Input("data: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(ForwardShape)
    .Doc("Hands the loop's final value to the frame around the loop.");

REGISTER_OP("RefExit")
    .Input("data: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .SetAllowsUninitializedInput()
    .SetShapeFn(ForwardShape)
    .Doc("Exit for a reference.");

REGISTER_OP("NextIteration")
    .Input("data: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(ForwardShape)
    .Doc("Makes data available to the loop's next iteration.");

REGISTER_OP("RefNextIteration")
    .Input("data: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .SetAllowsUninitializedInput()
    .SetShapeFn(ForwardShape)
    .Doc("NextIteration for a reference.");

REGISTER_OP("LoopCond")
    .Input("input: bool")
    .Output("output: bool")
    .SetShapeFn(LoopCondShape)
    .Doc("Forwards the loop's predicate: the loop runs another iteration iff it is true.");

}  // namespace distflow
