// BuildCond: adds a conditional to a Scope's graph in the form TF1's tf.cond
// writes it: Switch(pred, pred) gives the two branch pivots, each input goes
// through a Switch on pred, each branch is built from its side of the
// Switches, and a Merge per output joins them. Only the branch pred picks
// runs; the other's nodes are dead. Works on one device and split over
// devices and tasks. Thread-compatible, like Scope.
#ifndef DISTFLOW_CC_COND_H_
#define DISTFLOW_CC_COND_H_

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// Builds one branch's outputs from its inputs. Called once, with a
// sub-scope ("cond/then", "cond/else") whose ops depend on the branch's
// pivot by a control edge, so its constants run only when it is taken.
using BranchGraphBuilderFn = std::function<absl::Status(
    const Scope&, const std::vector<Output>& inputs, std::vector<Output>* outputs)>;

// Adds `pred ? then_fn(inputs) : else_fn(inputs)`; `*outputs` gets the
// merged values. InvalidArgument when pred is not a bool or the branches
// return different numbers or dtypes of values; the branches' own errors are
// returned as they are, and recorded in the scope.
absl::Status BuildCond(const Scope& scope, const Output& pred, const std::vector<Output>& inputs,
                       const BranchGraphBuilderFn& then_fn, const BranchGraphBuilderFn& else_fn,
                       OutputList* outputs);

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_COND_H_
