// Test helpers for gradient functions: build a function of placeholders in
// double and in float, and check its symbolic gradients against numeric ones
// with ComputeGradientError (max error < 1e-4 in double, < 1e-2 in float).
#ifndef DISTFLOW_TESTS_GRADIENTS_GRAD_TEST_UTIL_H_
#define DISTFLOW_TESTS_GRADIENTS_GRAD_TEST_UTIL_H_

#include <functional>
#include <vector>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/framework/tensor.h"

namespace distflow {
namespace test {

// One input of the function under test: its shape, the shape its
// placeholder declares (unknown dims exercise the gradients' dynamic-shape
// paths) and its values (row-major).
struct GradInput {
  TensorShape shape;
  std::vector<double> values;
  bool unknown_shape = false;
};

// Values drawn uniformly from [lo, hi) with a fixed seed per call order.
GradInput Rand(const TensorShape& shape, double lo = -1, double hi = 1);
// Distinct values spread over [lo, hi) in a shuffled order, at least
// (hi - lo) / (2n) apart, so no two are tied (for Max, Maximum, Relu, ...).
GradInput Spread(const TensorShape& shape, double lo = -1, double hi = 1);
GradInput Values(const TensorShape& shape, std::vector<double> values);
// The same input fed through a placeholder of unknown shape.
GradInput Unknown(GradInput in);

// Builds the outputs checked from the placeholders (one per input, of the
// dtype being checked).
using GradFunction = std::function<OutputList(const Scope& scope, const OutputList& xs)>;

// Checks `fn` in double and in float; failures name the dtype.
void ExpectGradientsMatch(const GradFunction& fn, const std::vector<GradInput>& inputs);

// A tensor of `dtype` (float or double) with `values`.
Tensor MakeTensor(DataType dtype, const TensorShape& shape, const std::vector<double>& values);

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_GRADIENTS_GRAD_TEST_UTIL_H_
