// Checks symbolic gradients against numeric ones, in the shape of
// TensorFlow's C++ gradient checker. ComputeGradientError builds the
// Jacobian of `ys` with respect to `xs` twice and reports the largest
// absolute difference between the two:
//  - theoretically: AddSymbolicGradients(ys, xs, dys) with a placeholder dy
//    per y, run once per element of the ys with dy one-hot on that element;
//  - numerically: central differences (y(x + d) - y(x - d)) / 2d, one pair of
//    runs per element of the xs, with d = 1e-5 when every x and y is double
//    and 1e-3 otherwise.
// Both run in one in-process session (NewSession(SessionOptions())) on the
// scope's graph, with the xs fed. Every x and y must be float or double.
// The functions add nodes to the scope's graph; like Scope, call them from
// one thread at a time.
#ifndef DISTFLOW_GRADIENTS_GRADIENT_CHECKER_H_
#define DISTFLOW_GRADIENTS_GRADIENT_CHECKER_H_

#include <vector>

#include "absl/status/status.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/framework/tensor.h"

namespace distflow {

// With the xs fed `x_init_values` (dtype and shape of each x). y_shapes[i]
// is the shape ys[i] has for those values. Errors: InvalidArgument for
// mismatched counts, a dtype other than float/double or a value whose dtype
// differs from its x; the error of building the gradients or of a run.
absl::Status ComputeGradientError(const Scope& scope, const OutputList& xs,
                                  const std::vector<Tensor>& x_init_values, const OutputList& ys,
                                  const std::vector<TensorShape>& y_shapes, double* max_error);

// The same with the xs fed values drawn uniformly from [-1, 1) (a fixed
// seed, so results repeat).
absl::Status ComputeGradientError(const Scope& scope, const OutputList& xs,
                                  const std::vector<TensorShape>& x_shapes, const OutputList& ys,
                                  const std::vector<TensorShape>& y_shapes, double* max_error);

// One x and one y.
absl::Status ComputeGradientError(const Scope& scope, const Output& x, const Tensor& x_init_value,
                                  const Output& y, const TensorShape& y_shape, double* max_error);

}  // namespace distflow

#endif  // DISTFLOW_GRADIENTS_GRADIENT_CHECKER_H_
