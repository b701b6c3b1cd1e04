#include "distflow/cc/while_loop.h"

#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/ops/control_flow_ops.h"
#include "distflow/core/status.h"

namespace distflow {
namespace ops {

absl::Status BuildWhileLoop(const Scope& scope, const std::vector<Output>& inputs,
                            const CondGraphBuilderFn& cond, const BodyGraphBuilderFn& body,
                            const std::string& frame_name, OutputList* outputs,
                            int64_t parallel_iterations) {
  DF_RETURN_IF_ERROR(scope.status());
  auto fail = [&scope](absl::Status s) {
    scope.UpdateStatus(s);
    return s;
  };
  if (inputs.empty()) {
    return fail(errors::InvalidArgument("while loop '", frame_name, "' needs loop variables"));
  }
  // Only the Enters run in the frame around the loop, where the scope's
  // control dependencies live; the loop's own nodes depend on its pivots.
  const Scope outside = scope.NewSubScope(frame_name);
  const Scope loop = outside.WithNoControlDependencies();
  const std::string frame = loop.name_prefix();
  std::vector<Output> merges;
  for (const Output& in : inputs) {
    Enter enter(outside.WithOpName("Enter"), in, frame,
                Enter::Attrs().ParallelIterations(parallel_iterations));
    // The second input is the NextIteration, added once the body exists.
    Merge merge(loop.WithOpName("Merge"), {enter.output, enter.output});
    merges.push_back(merge.output);
  }
  DF_RETURN_IF_ERROR(loop.status());

  Output pred;
  DF_RETURN_IF_ERROR(
      fail(cond(loop.NewSubScope("cond").WithControlDependencies(merges[0]), merges, &pred)));
  DF_RETURN_IF_ERROR(loop.status());
  if (pred.node() == nullptr || pred.type() != DT_BOOL) {
    return fail(errors::InvalidArgument("the condition of while loop '", frame,
                                        "' must return a bool tensor"));
  }
  LoopCond loop_cond(loop.WithOpName("LoopCond"), pred);

  std::vector<Output> body_inputs;
  outputs->clear();
  for (const Output& merge : merges) {
    Switch sw(loop.WithOpName("Switch"), merge, loop_cond.output);
    outputs->push_back(Exit(loop.WithOpName("Exit"), sw.output_false).output);
    body_inputs.push_back(Identity(loop.WithOpName("Identity"), sw.output_true).output);
  }
  DF_RETURN_IF_ERROR(loop.status());

  std::vector<Output> next;
  DF_RETURN_IF_ERROR(fail(
      body(loop.NewSubScope("body").WithControlDependencies(body_inputs[0]), body_inputs, &next)));
  DF_RETURN_IF_ERROR(loop.status());
  if (next.size() != inputs.size()) {
    return fail(errors::InvalidArgument("the body of while loop '", frame, "' returned ",
                                        next.size(), " values for ", inputs.size(),
                                        " loop variables"));
  }
  for (size_t k = 0; k < next.size(); ++k) {
    if (next[k].node() == nullptr || next[k].type() != BaseType(inputs[k].type())) {
      return fail(errors::InvalidArgument(
          "the body of while loop '", frame, "' returned ",
          next[k].node() == nullptr ? std::string("no tensor") : DataTypeString(next[k].type()),
          " for loop variable ", k, ", which is ", DataTypeString(BaseType(inputs[k].type()))));
    }
    NextIteration nx(loop.WithOpName("NextIteration"), next[k]);
    DF_RETURN_IF_ERROR(loop.status());
    Graph* g = loop.graph();
    for (const Edge* e : merges[k].node()->in_edges()) {
      if (e->dst_input() == 1) {
        g->RemoveEdge(e);
        break;
      }
    }
    g->AddEdge(nx.node(), 0, merges[k].node(), 1);
  }
  return absl::OkStatus();
}

}  // namespace ops
}  // namespace distflow
