// Symbolic differentiation of client graphs, with TensorFlow's semantics.
// AddSymbolicGradients adds to a Scope's graph the ops that compute the
// gradients of some outputs with respect to some inputs, by walking the
// graph backwards from the outputs over the nodes that lie between them and
// the inputs and calling each node's gradient function (registered in
// gradients/grad_op_registry.h). Where a tensor feeds several consumers, the
// gradients flowing back from them are summed with AddN. As in TensorFlow,
// gradients flow only into floating-point tensors and variable handles:
// integer and bool tensors (shapes, indices, masks) carry none, so an op
// reached only through them needs no gradient function.
//
// Inputs that no gradient reaches (not connected to the outputs, or only
// through StopGradient or non-differentiable ops such as Shape or Equal) get
// a zero gradient, ZerosLike(input), as TensorFlow's C++ API gives; a
// resource input (a variable handle) gets a null Output instead, since zeros
// of a handle mean nothing.
//
// Every function builds in the Scope it is given and must be called from the
// thread that owns that Scope.
#ifndef DISTFLOW_GRADIENTS_GRADIENTS_H_
#define DISTFLOW_GRADIENTS_GRADIENTS_H_

#include <vector>

#include "absl/status/status.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {

// Adds the gradients of sum_i(sum(outputs[i] * grad_inputs[i])) with respect
// to each of `inputs` and sets (*grad_outputs)[j] to the one for inputs[j].
// grad_inputs[i] (TensorFlow's grad_ys) must have the dtype and shape of
// outputs[i]. Ops are named under `scope` ("<node>_grad/..." sub-scopes).
// Errors, with nothing useful added to the graph:
//  - InvalidArgument for a null output or input, mismatched counts, or a
//    grad_input whose dtype differs from its output's;
//  - NotFound "No gradient defined for op: <Op> (node '<name>')" when a node
//    between the outputs and the inputs has no registered gradient;
//  - Unimplemented when the nodes between them form a cycle;
//  - the scope's error when building a gradient op fails.
absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                                  const std::vector<Output>& inputs,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Output>* grad_outputs);

// The same with grad_inputs = OnesLike(outputs[i]): the gradients of
// sum_i(sum(outputs[i])).
absl::Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& outputs,
                                  const std::vector<Output>& inputs,
                                  std::vector<Output>* grad_outputs);

// What a gradient function returns for an input that has no gradient (an
// index, a shape, a condition): a null Output.
Output NoGradient();

}  // namespace distflow

#endif  // DISTFLOW_GRADIENTS_GRADIENTS_H_
