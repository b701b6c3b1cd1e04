// Numeric checks of the math ops' gradients, in double and float: unary
// math (trigonometry, Log1p, Expm1 and Erf included; Floor, Ceil and Round
// have none), binary arithmetic with and without broadcasting (also through
// placeholders of unknown shape), MatMul and BatchMatMulV2 in every
// transpose/adjoint case, AddN, Cast, Select/SelectV2 and the reductions.
#include <functional>
#include <vector>

#include "distflow/cc/ops/standard_ops.h"
#include "distflow/gradients/gradient_checker.h"
#include "distflow/gradients/gradients.h"
#include "grad_test_util.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using test::ExpectGradientsMatch;
using test::GradInput;
using test::Rand;
using test::Spread;
using test::Unknown;
using test::Values;

using Unary = std::function<Output(const Scope&, const Output&)>;
using Binary = std::function<Output(const Scope&, const Output&, const Output&)>;

void CheckUnary(const Unary& f, const GradInput& x) {
  ExpectGradientsMatch(
      [&](const Scope& s, const OutputList& xs) -> OutputList { return {f(s, xs[0])}; }, {x});
}

TEST(MathGradTest, Neg) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Neg(s, x); },
             Rand(TensorShape({2, 3})));
}
TEST(MathGradTest, Abs) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Abs(s, x); },
             Spread(TensorShape({2, 3})));
}
TEST(MathGradTest, SignHasZeroGradient) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Sign(s, x); },
             Spread(TensorShape({4})));
}
TEST(MathGradTest, Square) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Square(s, x); },
             Rand(TensorShape({2, 3})));
}
TEST(MathGradTest, Sqrt) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Sqrt(s, x); },
             Rand(TensorShape({2, 3}), 0.5, 2));
}
TEST(MathGradTest, Rsqrt) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Rsqrt(s, x); },
             Rand(TensorShape({2, 3}), 0.5, 2));
}
TEST(MathGradTest, Exp) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Exp(s, x); },
             Rand(TensorShape({2, 3})));
}
TEST(MathGradTest, Log) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Log(s, x); },
             Rand(TensorShape({2, 3}), 0.5, 2));
}
TEST(MathGradTest, Tanh) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Tanh(s, x); },
             Rand(TensorShape({2, 3}), -2, 2));
}
TEST(MathGradTest, Sigmoid) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Sigmoid(s, x); },
             Rand(TensorShape({2, 3}), -3, 3));
}
TEST(MathGradTest, Reciprocal) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Reciprocal(s, x); },
             Rand(TensorShape({2, 3}), 0.5, 2));
}

TEST(MathGradTest, Sin) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Sin(s, x); },
             Rand(TensorShape({2, 3}), -3, 3));
}
TEST(MathGradTest, Cos) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Cos(s, x); },
             Rand(TensorShape({2, 3}), -3, 3));
}
TEST(MathGradTest, Log1p) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Log1p(s, x); },
             Rand(TensorShape({2, 3}), -0.5, 2));
}
TEST(MathGradTest, Expm1) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Expm1(s, x); },
             Rand(TensorShape({2, 3}), -2, 2));
}
TEST(MathGradTest, Erf) {
  CheckUnary([](const Scope& s, const Output& x) { return ops::Erf(s, x); },
             Rand(TensorShape({2, 3}), -2, 2));
}
TEST(MathGradTest, FloorCeilAndRoundHaveNoGradient) {
  // Between 0.1 and 0.4 none of them jumps: the numeric gradient is 0 too.
  for (const Unary& f :
       std::vector<Unary>{[](const Scope&s, const Output&x) { return ops::Floor(s, x); },
                          [](const Scope&s, const Output&x) { return ops::Ceil(s, x); },
                          [](const Scope&s, const Output&x) { return ops::Round(s, x); }}) {
    CheckUnary(f, Rand(TensorShape({2, 3}), 0.1, 0.4));
  }
}

// Each binary op on equal shapes, on every broadcasting pattern, and with
// both operands fed through placeholders of unknown shape.
void CheckBinary(const Binary& f, double lo_x, double hi_x, double lo_y, double hi_y) {
  const std::vector<std::pair<TensorShape, TensorShape>> cases = {
      {TensorShape({2, 3}), TensorShape({2, 3})}, {TensorShape({2, 3}), TensorShape({3})},
      {TensorShape({3}), TensorShape({2, 3})},    {TensorShape({2, 1}), TensorShape({1, 3})},
      {TensorShape({}), TensorShape({2, 3})},     {TensorShape({2, 3, 1}), TensorShape({3, 4})},
  };
  const auto fn = [&](const Scope& s, const OutputList& xs) -> OutputList {
    return {f(s, xs[0], xs[1])};
  };
  for (const auto& [sx, sy] : cases) {
    SCOPED_TRACE(sx.DebugString() + " with " + sy.DebugString());
    const GradInput x = Spread(sx, lo_x, hi_x);
    const GradInput y = Spread(sy, lo_y, hi_y);
    ExpectGradientsMatch(fn, {x, y});
    ExpectGradientsMatch(fn, {Unknown(x), Unknown(y)});
  }
}

TEST(MathGradTest, AddV2) {
  CheckBinary([](const Scope& s, const Output& x, const Output& y) { return ops::AddV2(s, x, y); },
              -1, 1, -1, 1);
}
TEST(MathGradTest, Add) {
  CheckBinary([](const Scope& s, const Output& x, const Output& y) { return ops::Add(s, x, y); },
              -1, 1, -1, 1);
}
TEST(MathGradTest, Sub) {
  CheckBinary([](const Scope& s, const Output& x, const Output& y) { return ops::Sub(s, x, y); },
              -1, 1, -1, 1);
}
TEST(MathGradTest, Mul) {
  CheckBinary([](const Scope& s, const Output& x, const Output& y) { return ops::Mul(s, x, y); },
              -1, 1, -1, 1);
}
TEST(MathGradTest, RealDiv) {
  CheckBinary(
      [](const Scope& s, const Output& x, const Output& y) { return ops::RealDiv(s, x, y); }, -1, 1,
      0.5, 2);
}
TEST(MathGradTest, Div) {
  CheckBinary([](const Scope& s, const Output& x, const Output& y) { return ops::Div(s, x, y); },
              -1, 1, 0.5, 2);
}
TEST(MathGradTest, Pow) {
  CheckBinary([](const Scope& s, const Output& x, const Output& y) { return ops::Pow(s, x, y); },
              0.5, 2, -1.5, 1.5);
}
TEST(MathGradTest, PowOfNonPositiveBaseHasZeroExponentGradient) {
  // x^2 at x <= 0: the exponent's gradient is taken as 0 there.
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Pow(s, xs[0], ops::Cast(s, 2.0, xs[0].type()))};
      },
      {Values(TensorShape({3}), {-1.5, -0.5, 0.7})});
}
// For Maximum and Minimum, y's range keeps every y at least 3e-3 from every
// x in all the cases, farther than the numeric step: no tie is crossed.
TEST(MathGradTest, Maximum) {
  CheckBinary(
      [](const Scope& s, const Output& x, const Output& y) { return ops::Maximum(s, x, y); }, -1, 1,
      -0.93, 0.87);
}
TEST(MathGradTest, Minimum) {
  CheckBinary(
      [](const Scope& s, const Output& x, const Output& y) { return ops::Minimum(s, x, y); }, -1, 1,
      -0.93, 0.87);
}
TEST(MathGradTest, SquaredDifference) {
  CheckBinary([](const Scope& s, const Output& x,
                 const Output& y) { return ops::SquaredDifference(s, x, y); },
              -1, 1, -1, 1);
}
TEST(MathGradTest, FloorMod) {
  // x / y stays between integers, away from FloorMod's jumps.
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::FloorMod(s, xs[0], xs[1])};
      },
      {Values(TensorShape({4}), {2.3, -2.3, 5.5, 0.4}),
       Values(TensorShape({4}), {1.1, 1.1, -1.5, 0.9})});
}

TEST(MathGradTest, MatMulAllTransposeCases) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(testing::Message() << "transpose_a " << ta << " transpose_b " << tb);
      const TensorShape a = ta ? TensorShape({3, 2}) : TensorShape({2, 3});
      const TensorShape b = tb ? TensorShape({4, 3}) : TensorShape({3, 4});
      ExpectGradientsMatch(
          [&](const Scope& s, const OutputList& xs) -> OutputList {
            return {ops::MatMul(s, xs[0], xs[1], ops::MatMul::TransposeA(ta).TransposeB(tb))};
          },
          {Rand(a), Rand(b)});
    }
  }
}

TEST(MathGradTest, BatchMatMulV2AllAdjointCases) {
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      SCOPED_TRACE(testing::Message() << "adj_x " << adj_x << " adj_y " << adj_y);
      const TensorShape x = adj_x ? TensorShape({2, 3, 2}) : TensorShape({2, 2, 3});
      const TensorShape y = adj_y ? TensorShape({2, 4, 3}) : TensorShape({2, 3, 4});
      ExpectGradientsMatch(
          [&](const Scope& s, const OutputList& xs) -> OutputList {
            return {
                ops::BatchMatMulV2(s, xs[0], xs[1], ops::BatchMatMulV2::AdjX(adj_x).AdjY(adj_y))};
          },
          {Rand(x), Rand(y)});
    }
  }
}

TEST(MathGradTest, BatchMatMulV2BroadcastBatchDims) {
  const auto fn = [](const Scope& s, const OutputList& xs) -> OutputList {
    return {ops::BatchMatMulV2(s, xs[0], xs[1])};
  };
  // Missing and size-1 batch dims on either side.
  ExpectGradientsMatch(fn, {Rand(TensorShape({2, 2, 3})), Rand(TensorShape({3, 4}))});
  ExpectGradientsMatch(fn, {Rand(TensorShape({2, 3})), Rand(TensorShape({3, 3, 4}))});
  ExpectGradientsMatch(fn, {Rand(TensorShape({1, 2, 2, 3})), Rand(TensorShape({2, 1, 3, 2}))});
  ExpectGradientsMatch(
      fn, {Unknown(Rand(TensorShape({2, 1, 2, 3}))), Unknown(Rand(TensorShape({3, 3, 2})))});
}

TEST(MathGradTest, AddN) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::AddN(s, {xs[0], xs[1], xs[0]})};
      },
      {Rand(TensorShape({2, 2})), Rand(TensorShape({2, 2}))});
}

TEST(MathGradTest, CastBetweenFloatingTypes) {
  // float -> double and double -> float; a float on the path limits the
  // precision of the check to the float tolerance.
  for (DataType from : {DT_FLOAT, DT_DOUBLE}) {
    const DataType to = from == DT_FLOAT ? DT_DOUBLE : DT_FLOAT;
    Scope scope = Scope::NewRootScope();
    auto x = ops::Placeholder(scope, from, ops::Placeholder::Shape({3}));
    auto y = ops::Square(scope, ops::Cast(scope, x, to));
    double max_error = -1;
    ASSERT_TRUE(ComputeGradientError(scope, x, test::MakeTensor(from, {3}, {0.5, -1.25, 2}), y, {3},
                                     &max_error)
                    .ok());
    EXPECT_LT(max_error, 1e-2) << DataTypeString(from);
  }
}

TEST(MathGradTest, CastFromIntegerHasNoGradient) {
  Scope scope = Scope::NewRootScope();
  auto x = ops::Placeholder(scope, DT_FLOAT);
  auto y = ops::Cast(scope, ops::Cast(scope, x, DT_INT32), DT_FLOAT);
  OutputList grads;
  ASSERT_TRUE(AddSymbolicGradients(scope, {y}, {x}, &grads).ok());
  EXPECT_EQ(grads[0].node()->type_string(), "ZerosLike");
}

TEST(MathGradTest, Select) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::Select(s, {{true, false, true}, {false, false, true}}, xs[0], xs[1]),
                ops::Select(s, {false, true}, xs[0], xs[1])};
      },
      {Rand(TensorShape({2, 3})), Rand(TensorShape({2, 3}))});
}

TEST(MathGradTest, SelectV2Broadcasting) {
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::SelectV2(s, {{true}, {false}}, xs[0], xs[1])};
      },
      {Rand(TensorShape({1, 3})), Rand(TensorShape({2, 3}))});
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        return {ops::SelectV2(s, {true, false, true}, xs[0], xs[1])};
      },
      {Unknown(Rand(TensorShape({2, 1}))), Unknown(Rand(TensorShape({})))});
}

// A reduction over several axis choices, with known and unknown shapes.
using Reduction = std::function<Output(const Scope&, const Output&, const Input&, bool keep_dims)>;

void CheckReduction(const Reduction& f, double lo, double hi) {
  const std::vector<Input::Initializer> axes = {0,
                                                1,
                                                -1,
                                                {0, 2},
                                                {2, 0, 1},
                                                Input::Initializer(int64_t{1}),
                                                Tensor(DT_INT32, TensorShape({0}))};
  for (size_t i = 0; i < axes.size(); ++i) {
    for (bool keep_dims : {false, true}) {
      for (bool unknown : {false, true}) {
        SCOPED_TRACE(testing::Message() << "axes case " << i << " keep_dims " << keep_dims
                                        << " unknown shape " << unknown);
        GradInput x = Spread(TensorShape({2, 3, 2}), lo, hi);
        if (unknown) x = Unknown(x);
        ExpectGradientsMatch(
            [&](const Scope& s, const OutputList& xs) -> OutputList {
              return {f(s, xs[0], axes[i], keep_dims)};
            },
            {x});
      }
    }
  }
}

TEST(MathGradTest, Sum) {
  CheckReduction([](const Scope& s, const Output& x, const Input& axes,
                    bool keep) { return ops::Sum(s, x, axes, ops::Sum::KeepDims(keep)); },
                 -1, 1);
}
TEST(MathGradTest, Mean) {
  CheckReduction([](const Scope& s, const Output& x, const Input& axes,
                    bool keep) { return ops::Mean(s, x, axes, ops::Mean::KeepDims(keep)); },
                 -1, 1);
}
TEST(MathGradTest, Max) {
  CheckReduction([](const Scope& s, const Output& x, const Input& axes,
                    bool keep) { return ops::Max(s, x, axes, ops::Max::KeepDims(keep)); },
                 -1, 1);
}
TEST(MathGradTest, Min) {
  CheckReduction([](const Scope& s, const Output& x, const Input& axes,
                    bool keep) { return ops::Min(s, x, axes, ops::Min::KeepDims(keep)); },
                 -1, 1);
}
TEST(MathGradTest, ProdOfNonzeroInputs) {
  CheckReduction([](const Scope& s, const Output& x, const Input& axes,
                    bool keep) { return ops::Prod(s, x, axes, ops::Prod::KeepDims(keep)); },
                 0.5, 1.5);
}

TEST(MathGradTest, MaxSharesTheGradientAmongTies) {
  // Two maxima in the first row: each gets half.
  ExpectGradientsMatch(
      [](const Scope& s, const OutputList& xs) -> OutputList {
        auto tied = ops::Concat(s, {xs[0], xs[0]}, 1);
        return {ops::Max(s, tied, 1)};
      },
      {Values(TensorShape({2, 1}), {0.5, -0.25})});
}

}  // namespace
}  // namespace distflow
