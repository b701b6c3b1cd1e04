// Functional control flow and calls, as TensorFlow 2's tf.function writes
// them: If/StatelessIf, While/StatelessWhile, Case/StatelessCase,
// PartitionedCall/StatefulPartitionedCall, the _Arg/_Retval nodes of a
// function body, and _SwitchN (Case's lowered form). None of the functional
// ops has a kernel: the lowering pass (graph/lower_functional_ops.h) turns
// them into Switch/Merge, loops and inlined bodies before placement. _Arg and
// _Retval have kernels for a session's feeds and fetches, which a
// DirectSession rewrites into them (kernels/function_ops.cc).
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// The `output_shapes` attr when it lists one shape per output, else unknown.
absl::Status OutputShapesOrUnknown(InferenceContext* c) {
  std::vector<PartialTensorShape> shapes;
  if (c->GetAttr("output_shapes", &shapes).ok() &&
      static_cast<int>(shapes.size()) == c->num_outputs()) {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
    return absl::OkStatus();
  }
  return UnknownShape(c);
}

absl::Status SwitchNShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(1));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(0));
  return absl::OkStatus();
}

}  // namespace

#define DF_REGISTER_IF(name)                                                      \
  REGISTER_OP(name)                                                               \
      .Input("cond: Tcond")                                                       \
      .Input("input: Tin")                                                        \
      .Output("output: Tout")                                                     \
      .Attr("Tcond: type")                                                        \
      .Attr("Tin: list(type) >= 0")                                               \
      .Attr("Tout: list(type) >= 0")                                              \
      .Attr("then_branch: func")                                                  \
      .Attr("else_branch: func")                                                  \
      .Attr("output_shapes: list(shape) = []")                                    \
      .SetShapeFn(OutputShapesOrUnknown)                                          \
      .Doc(                                                                       \
          "Calls then_branch(input) when cond is true, else else_branch(input); " \
          "lowered to Switch/Merge before placement.")

DF_REGISTER_IF("If").SetIsStateful();
DF_REGISTER_IF("StatelessIf");

#define DF_REGISTER_WHILE(name)                                                         \
  REGISTER_OP(name)                                                                     \
      .Input("input: T")                                                                \
      .Output("output: T")                                                              \
      .Attr("T: list(type) >= 0")                                                       \
      .Attr("cond: func")                                                               \
      .Attr("body: func")                                                               \
      .Attr("output_shapes: list(shape) = []")                                          \
      .Attr("parallel_iterations: int = 10")                                            \
      .SetShapeFn(OutputShapesOrUnknown)                                                \
      .Doc(                                                                             \
          "Repeats input = body(input) while cond(input); lowered to a loop of Enter, " \
          "Merge, Switch, LoopCond, NextIteration and Exit before placement.")

DF_REGISTER_WHILE("While").SetIsStateful();
DF_REGISTER_WHILE("StatelessWhile");

#define DF_REGISTER_CASE(name)                                                   \
  REGISTER_OP(name)                                                              \
      .Input("branch_index: int32")                                              \
      .Input("input: Tin")                                                       \
      .Output("output: Tout")                                                    \
      .Attr("Tin: list(type) >= 0")                                              \
      .Attr("Tout: list(type) >= 0")                                             \
      .Attr("branches: list(func) >= 1")                                         \
      .Attr("output_shapes: list(shape) = []")                                   \
      .SetShapeFn(OutputShapesOrUnknown)                                         \
      .Doc(                                                                      \
          "Calls branches[branch_index](input), the last branch when the index " \
          "is out of range; lowered to _SwitchN/Merge before placement.")

DF_REGISTER_CASE("Case").SetIsStateful();
DF_REGISTER_CASE("StatelessCase");

#define DF_REGISTER_CALL(name)                                                 \
  REGISTER_OP(name)                                                            \
      .Input("args: Tin")                                                      \
      .Output("output: Tout")                                                  \
      .Attr("Tin: list(type) >= 0")                                            \
      .Attr("Tout: list(type) >= 0")                                           \
      .Attr("f: func")                                                         \
      .Attr("config: string = ''")                                             \
      .Attr("config_proto: string = ''")                                       \
      .Attr("executor_type: string = ''")                                      \
      .SetShapeFn(UnknownShape)                                                \
      .Doc(                                                                    \
          "Calls f(args); the body is inlined into the caller's graph before " \
          "placement, so its nodes may run on several devices.")

DF_REGISTER_CALL("PartitionedCall");
DF_REGISTER_CALL("StatefulPartitionedCall").SetIsStateful();

#undef DF_REGISTER_IF
#undef DF_REGISTER_WHILE
#undef DF_REGISTER_CASE
#undef DF_REGISTER_CALL

REGISTER_OP("_Arg")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .SetShapeFn(UnknownShape)
    .Doc("Argument `index` of a function body.");

REGISTER_OP("_Retval")
    .Input("input: T")
    .Attr("T: type")
    .Attr("index: int >= 0")
    .SetIsStateful()
    .SetShapeFn(NoOutputs)
    .Doc("Result `index` of a function body.");

REGISTER_OP("_SwitchN")
    .Input("data: T")
    .Input("output_index: int32")
    .Output("outputs: num_outs * T")
    .Attr("num_outs: int >= 1")
    .Attr("T: type")
    .SetShapeFn(SwitchNShape)
    .Doc(
        "Forwards data to outputs[output_index] (the last output when the index is out of "
        "range); every other output is dead.");

}  // namespace distflow
