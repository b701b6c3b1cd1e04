// The process-wide table of gradient functions, keyed by op type. A gradient
// function builds, in a Scope, the gradients of an op's data inputs from the
// gradients of its outputs; AddSymbolicGradients (gradients/gradients.h) looks them
// up while it walks a graph backwards. Ops register at static
// initialization:
//   REGISTER_GRADIENT_OP("MatMul", MatMulGrad);
//   REGISTER_NO_GRADIENT_OP("Shape");  // not differentiable: no gradient
//                                      // flows through it, and no error
// Registration and lookup are thread-safe.
#ifndef DISTFLOW_GRADIENTS_GRAD_OP_REGISTRY_H_
#define DISTFLOW_GRADIENTS_GRAD_OP_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {

// Builds the gradients of `op`'s data inputs in `scope`.
//  - grad_inputs[i] is the gradient of the loss with respect to output i of
//    `op`. For an op with one output it is never null; for an op with
//    several, an output no gradient reached has a null Output and the
//    function treats it as zero.
//  - On success *grad_outputs holds exactly one entry per data input of
//    `op`: the gradient for that input (same dtype and shape as the input),
//    or NoGradient() for an input that is not differentiable.
// Errors are InvalidArgument / Unimplemented naming the node and what about
// it cannot be differentiated.
using GradFunc = absl::Status (*)(const Scope& scope, const Operation& op,
                                  const std::vector<Output>& grad_inputs,
                                  std::vector<Output>* grad_outputs);

class GradOpRegistry {
 public:
  static GradOpRegistry* Global();

  // Registers `func` for op type `op`; a null `func` marks the op as not
  // differentiable. A second registration for the same op is a programming
  // error and aborts. Returns true, so it can initialize a static.
  bool Register(absl::string_view op, GradFunc func);

  // Sets *func to the function registered for `op` (nullptr when the op was
  // registered as not differentiable). NotFound "No gradient defined for op:
  // <op>" when nothing is registered.
  absl::Status Lookup(absl::string_view op, GradFunc* func) const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, GradFunc> table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#define REGISTER_GRADIENT_OP(name, fn) DF_REGISTER_GRADIENT_OP_UNIQ_HELPER(__COUNTER__, name, fn)
#define REGISTER_NO_GRADIENT_OP(name) \
  DF_REGISTER_GRADIENT_OP_UNIQ_HELPER(__COUNTER__, name, nullptr)
#define DF_REGISTER_GRADIENT_OP_UNIQ_HELPER(ctr, name, fn) \
  DF_REGISTER_GRADIENT_OP_UNIQ(ctr, name, fn)
#define DF_REGISTER_GRADIENT_OP_UNIQ(ctr, name, fn)                 \
  static const bool df_register_gradient_op##ctr [[maybe_unused]] = \
      ::distflow::GradOpRegistry::Global()->Register(name, fn)

#endif  // DISTFLOW_GRADIENTS_GRAD_OP_REGISTRY_H_
