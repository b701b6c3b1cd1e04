// BuildWhileLoop: adds a loop to a Scope's graph in the form TF1's
// tf.while_loop writes it, so it runs on one device or split over devices
// and tasks, and the partitioner and executor treat it as TensorFlow's.
//
//   for each input k: Enter_k -> Merge_k <- NextIteration_k
//   cond(Merge_*) -> LoopCond -> Switch_k(Merge_k) -> Exit_k            (outputs)
//                                           `-> Identity_k -> body -> NextIteration_k
//
// cond and body are called once, with a sub-scope ("<frame>/cond",
// "<frame>/body") whose ops depend on the loop's pivot by a control edge, so
// constants they build live in the loop. They may only use the tensors they
// are given (pass outside values in as loop variables). The scope's control
// dependencies apply to the Enters only, so loops nest inside loop bodies and
// cond branches. The frame name is
// the loop's scope prefix, unique in the graph. Thread-compatible, like
// Scope.
#ifndef DISTFLOW_CC_WHILE_LOOP_H_
#define DISTFLOW_CC_WHILE_LOOP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// Builds the loop's predicate (a bool scalar) from the loop variables.
using CondGraphBuilderFn =
    std::function<absl::Status(const Scope&, const std::vector<Output>& inputs, Output* output)>;
// Builds the next values of the loop variables, one per input, same dtypes.
using BodyGraphBuilderFn = std::function<absl::Status(
    const Scope&, const std::vector<Output>& inputs, std::vector<Output>* outputs)>;

// Adds `while cond(vars): vars = body(vars)` starting from `inputs`, with at
// most `parallel_iterations` iterations running at once; `*outputs` gets the
// final values. InvalidArgument when inputs is empty, cond does not return a
// bool, or body returns the wrong number or dtypes of values; errors of cond
// and body (and of the scope) are returned as they are, and recorded in the
// scope.
absl::Status BuildWhileLoop(const Scope& scope, const std::vector<Output>& inputs,
                            const CondGraphBuilderFn& cond, const BodyGraphBuilderFn& body,
                            const std::string& frame_name, OutputList* outputs,
                            int64_t parallel_iterations = 10);

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_WHILE_LOOP_H_
