// Tests for the elementwise arithmetic kernels (binary with broadcasting,
// unary, unary gradients).
#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectTensorEqual;
using test::ExpectTensorNear;
using test::RunKernel;
using ::testing::HasSubstr;

Tensor Run1(const std::string& op, const std::vector<Tensor>& inputs, DataType t) {
  auto out = RunKernel(op, inputs, {{"T", t}});
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  if (!out.ok() || out->size() != 1) return Tensor();
  return (*out)[0];
}

TEST(MathBinaryTest, AddSameShapeFloat) {
  ExpectTensorNear(AsTensor<float>({11, 22, 33, 44, 55, 66}, {2, 3}),
                   Run1("AddV2",
                        {AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}),
                         AsTensor<float>({10, 20, 30, 40, 50, 60}, {2, 3})},
                        DT_FLOAT));
}

TEST(MathBinaryTest, BroadcastRowVector) {
  // [2,3] with [3].
  ExpectTensorEqual(
      AsTensor<int32_t>({11, 22, 33, 14, 25, 36}, {2, 3}),
      Run1("Add",
           {AsTensor<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}), AsTensor<int32_t>({10, 20, 30}, {3})},
           DT_INT32));
  ExpectTensorEqual(
      AsTensor<int32_t>({-9, -18, -27, -6, -15, -24}, {2, 3}),
      Run1("Sub",
           {AsTensor<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}), AsTensor<int32_t>({10, 20, 30}, {3})},
           DT_INT32));
}

TEST(MathBinaryTest, BroadcastColumnWithRow) {
  // [2,1] with [1,3] -> [2,3].
  ExpectTensorNear(
      AsTensor<double>({10, 20, 30, 20, 40, 60}, {2, 3}),
      Run1("Mul", {AsTensor<double>({1, 2}, {2, 1}), AsTensor<double>({10, 20, 30}, {1, 3})},
           DT_DOUBLE));
}

TEST(MathBinaryTest, ScalarWithTensorBothSides) {
  ExpectTensorNear(
      AsTensor<float>({1, 0.5, 0.25}, {3}),
      Run1("RealDiv", {Tensor::Scalar<float>(1), AsTensor<float>({1, 2, 4}, {3})}, DT_FLOAT));
  ExpectTensorNear(
      AsTensor<float>({0.5, 1, 2}, {3}),
      Run1("RealDiv", {AsTensor<float>({1, 2, 4}, {3}), Tensor::Scalar<float>(2)}, DT_FLOAT));
  ExpectTensorEqual(
      Tensor::Scalar<int64_t>(7),
      Run1("AddV2", {Tensor::Scalar<int64_t>(3), Tensor::Scalar<int64_t>(4)}, DT_INT64));
}

TEST(MathBinaryTest, MiddleDimensionBroadcast) {
  // [2,1,2] with [3,1] -> [2,3,2]: several segments per row.
  Tensor a = AsTensor<int64_t>({1, 2, 3, 4}, {2, 1, 2});
  Tensor b = AsTensor<int64_t>({10, 20, 30}, {3, 1});
  ExpectTensorEqual(AsTensor<int64_t>({11, 12, 21, 22, 31, 32, 13, 14, 23, 24, 33, 34}, {2, 3, 2}),
                    Run1("AddV2", {a, b}, DT_INT64));
}

TEST(MathBinaryTest, LargeBroadcastMatchesScalarLoop) {
  // Big enough to be sharded over the intra-op pool.
  const int64_t rows = 300, cols = 257;
  std::vector<float> a(rows * cols), b(cols), want(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) a[i] = static_cast<float>(i % 97);
  for (int64_t j = 0; j < cols; ++j) b[j] = static_cast<float>(j) * 0.5f;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      want[i * cols + j] = a[i * cols + j] - b[j];
    }
  }
  ExpectTensorNear(
      AsTensor<float>(want, {rows, cols}),
      Run1("Sub", {AsTensor<float>(a, {rows, cols}), AsTensor<float>(b, {cols})}, DT_FLOAT));
}

TEST(MathBinaryTest, EmptyTensors) {
  Tensor out =
      Run1("AddV2", {AsTensor<float>({}, {0, 3}), AsTensor<float>({1, 2, 3}, {3})}, DT_FLOAT);
  EXPECT_EQ(out.shape().DebugString(), "[0,3]");
  out = Run1("Mul", {AsTensor<int32_t>({}, {0, 3}), Tensor::Scalar<int32_t>(2)}, DT_INT32);
  EXPECT_EQ(out.shape().DebugString(), "[0,3]");
}

TEST(MathBinaryTest, IncompatibleShapes) {
  auto out = RunKernel(
      "AddV2", {AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}), AsTensor<float>({1, 2, 3, 4}, {4})},
      {{"T", DT_FLOAT}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("incompatible shapes for broadcasting: [2,3] and [4]"));
}

TEST(MathBinaryTest, DivisionIntegerAndFloat) {
  ExpectTensorEqual(
      AsTensor<int32_t>({3, -3, -3, 3}, {4}),
      Run1("Div", {AsTensor<int32_t>({7, -7, 7, -7}, {4}), AsTensor<int32_t>({2, 2, -2, -2}, {4})},
           DT_INT32));
  ExpectTensorNear(
      AsTensor<double>({3.5, -3.5}, {2}),
      Run1("Div", {AsTensor<double>({7, -7}, {2}), Tensor::Scalar<double>(2)}, DT_DOUBLE));
}

TEST(MathBinaryTest, FloorDivAndFloorModFollowPython) {
  // Python: 7//2=3, -7//2=-4, 7//-2=-4, -7//-2=3; 7%2=1, -7%2=1, 7%-2=-1,
  // -7%-2=-1.
  Tensor x = AsTensor<int64_t>({7, -7, 7, -7, 6, -6}, {6});
  Tensor y = AsTensor<int64_t>({2, 2, -2, -2, 3, 3}, {6});
  ExpectTensorEqual(AsTensor<int64_t>({3, -4, -4, 3, 2, -2}, {6}),
                    Run1("FloorDiv", {x, y}, DT_INT64));
  ExpectTensorEqual(AsTensor<int64_t>({1, 1, -1, -1, 0, 0}, {6}),
                    Run1("FloorMod", {x, y}, DT_INT64));
  Tensor xf = AsTensor<float>({7, -7, 7, -7, 5.5f}, {5});
  Tensor yf = AsTensor<float>({2, 2, -2, -2, 2}, {5});
  ExpectTensorNear(AsTensor<float>({3, -4, -4, 3, 2}, {5}), Run1("FloorDiv", {xf, yf}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({1, 1, -1, -1, 1.5f}, {5}),
                   Run1("FloorMod", {xf, yf}, DT_FLOAT));
}

TEST(MathBinaryTest, IntegerDivisionByZeroIsAnError) {
  for (const char* op : {"Div", "FloorDiv", "FloorMod", "RealDiv"}) {
    auto out = RunKernel(op, {AsTensor<int32_t>({1, 2}, {2}), AsTensor<int32_t>({1, 0}, {2})},
                         {{"T", DT_INT32}});
    ASSERT_FALSE(out.ok()) << op;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << op;
    EXPECT_THAT(std::string(out.status().message()), HasSubstr("Integer division by zero")) << op;
  }
  auto out = RunKernel("FloorDiv", {AsTensor<int64_t>({5}, {1}), Tensor::Scalar<int64_t>(0)},
                       {{"T", DT_INT64}});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MathBinaryTest, FloatDivisionByZeroIsInfinite) {
  Tensor out = Run1("RealDiv", {AsTensor<float>({1, -1}, {2}), Tensor::Scalar<float>(0)}, DT_FLOAT);
  EXPECT_TRUE(std::isinf(out.flat<float>()[0]));
  EXPECT_LT(out.flat<float>()[1], 0);
}

TEST(MathBinaryTest, MostNegativeDividedByMinusOneWraps) {
  const int32_t lo = std::numeric_limits<int32_t>::min();
  ExpectTensorEqual(
      AsTensor<int32_t>({lo}, {1}),
      Run1("Div", {AsTensor<int32_t>({lo}, {1}), AsTensor<int32_t>({-1}, {1})}, DT_INT32));
}

TEST(MathBinaryTest, Pow) {
  ExpectTensorEqual(
      AsTensor<int32_t>({1, 2, 9, 1024}, {4}),
      Run1("Pow", {AsTensor<int32_t>({5, 2, 3, 2}, {4}), AsTensor<int32_t>({0, 1, 2, 10}, {4})},
           DT_INT32));
  ExpectTensorNear(
      AsTensor<float>({1, 0.5f, 3}, {3}),
      Run1("Pow", {AsTensor<float>({1, 4, 9}, {3}), AsTensor<float>({3, -0.5f, 0.5f}, {3})},
           DT_FLOAT));
  auto out = RunKernel("Pow", {AsTensor<int64_t>({2}, {1}), AsTensor<int64_t>({-1}, {1})},
                       {{"T", DT_INT64}});
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("negative integer powers"));
}

TEST(MathBinaryTest, MaximumMinimumSquaredDifference) {
  Tensor x = AsTensor<float>({1, 5, -3, NAN}, {4});
  Tensor y = AsTensor<float>({2, 4, -3, 1}, {4});
  ExpectTensorNear(AsTensor<float>({2, 5, -3, NAN}, {4}), Run1("Maximum", {x, y}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({1, 4, -3, NAN}, {4}), Run1("Minimum", {x, y}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({1, 1, 0, NAN}, {4}),
                   Run1("SquaredDifference", {x, y}, DT_FLOAT));
  ExpectTensorEqual(
      AsTensor<int64_t>({3, 3, 9}, {3}),
      Run1("Maximum", {AsTensor<int64_t>({1, 2, 9}, {3}), Tensor::Scalar<int64_t>(3)}, DT_INT64));
  ExpectTensorEqual(
      AsTensor<int32_t>({9, 0, 25}, {3}),
      Run1("SquaredDifference",
           {AsTensor<int32_t>({1, 2, 3}, {3}), AsTensor<int32_t>({4, 2, -2}, {3})}, DT_INT32));
}

TEST(MathBinaryTest, Bfloat16AndStrings) {
  Tensor a(DT_BFLOAT16, TensorShape({2}));
  a.flat<bfloat16>()[0] = bfloat16(1.5f);
  a.flat<bfloat16>()[1] = bfloat16(-2.0f);
  Tensor want(DT_BFLOAT16, TensorShape({2}));
  want.flat<bfloat16>()[0] = bfloat16(3.0f);
  want.flat<bfloat16>()[1] = bfloat16(-4.0f);
  ExpectTensorNear(want, Run1("AddV2", {a, a}, DT_BFLOAT16));

  Tensor s = Tensor::FromVector<std::string>({"a", "bc"});
  ExpectTensorEqual(Tensor::FromVector<std::string>({"ax", "bcx"}),
                    Run1("Add", {s, Tensor::Scalar<std::string>("x")}, DT_STRING));
}

TEST(MathBinaryTest, InPlaceWhenInputIsUnshared) {
  // The harness hands the kernel sole copies of its inputs, so the output
  // may reuse input 0's buffer; values must still be right.
  ExpectTensorNear(
      AsTensor<float>({2, 4, 6, 5, 7, 9}, {2, 3}),
      Run1("AddV2",
           {AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}), AsTensor<float>({1, 2, 3}, {1, 3})},
           DT_FLOAT));
}

TEST(MathUnaryTest, FloatFunctions) {
  Tensor x = AsTensor<float>({0.25f, 1, 4}, {3});
  ExpectTensorNear(AsTensor<float>({0.5f, 1, 2}, {3}), Run1("Sqrt", {x}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({2, 1, 0.5f}, {3}), Run1("Rsqrt", {x}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({4, 1, 0.25f}, {3}), Run1("Reciprocal", {x}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({std::log(0.25f), 0, std::log(4.0f)}, {3}),
                   Run1("Log", {x}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({std::exp(0.25f), std::exp(1.0f), std::exp(4.0f)}, {3}),
                   Run1("Exp", {x}, DT_FLOAT));
  Tensor z = AsTensor<double>({-1, 0, 2}, {3});
  ExpectTensorNear(AsTensor<double>({std::tanh(-1.0), 0, std::tanh(2.0)}, {3}),
                   Run1("Tanh", {z}, DT_DOUBLE));
  ExpectTensorNear(AsTensor<double>({1 / (1 + std::exp(1.0)), 0.5, 1 / (1 + std::exp(-2.0))}, {3}),
                   Run1("Sigmoid", {z}, DT_DOUBLE));
}

TEST(MathUnaryTest, TrigonometryAndSpecialFunctions) {
  const double pi = 3.14159265358979323846;
  ExpectTensorNear(AsTensor<double>({0, 1, -0.5}, {3}),
                   Run1("Sin", {AsTensor<double>({0, pi / 2, -pi / 6}, {3})}, DT_DOUBLE), 1e-12);
  ExpectTensorNear(AsTensor<double>({1, -1, 0.5}, {3}),
                   Run1("Cos", {AsTensor<double>({0, pi, pi / 3}, {3})}, DT_DOUBLE), 1e-12);
  ExpectTensorNear(AsTensor<float>({0, 0.5204999f, -0.8427008f}, {3}),
                   Run1("Erf", {AsTensor<float>({0, 0.5f, -1}, {3})}, DT_FLOAT), 1e-6);
  ExpectTensorNear(AsTensor<double>({0, 1}, {2}),
                   Run1("Log1p", {AsTensor<double>({0, std::exp(1.0) - 1}, {2})}, DT_DOUBLE),
                   1e-12);
  ExpectTensorNear(AsTensor<double>({0, 1}, {2}),
                   Run1("Expm1", {AsTensor<double>({0, std::log(2.0)}, {2})}, DT_DOUBLE), 1e-12);
  // Near zero they keep the digits that log(1 + x) and exp(x) - 1 lose in
  // float: both would be off by about 19 % at 1e-7.
  const Tensor tiny = AsTensor<float>({1e-7f}, {1});
  EXPECT_NEAR(Run1("Log1p", {tiny}, DT_FLOAT).flat<float>()[0] / 1e-7, 1, 1e-5);
  EXPECT_NEAR(Run1("Expm1", {tiny}, DT_FLOAT).flat<float>()[0] / 1e-7, 1, 1e-5);
}

TEST(MathUnaryTest, RoundingHalvesGoToEven) {
  Tensor x = AsTensor<float>({-2.5f, -1.5f, -0.4f, 0.5f, 1.5f, 2.5f, 2.6f}, {7});
  ExpectTensorEqual(AsTensor<float>({-2, -2, -0.0f, 0, 2, 2, 3}, {7}),
                    Run1("Round", {x}, DT_FLOAT));
  ExpectTensorEqual(AsTensor<float>({-2, -1, -0.0f, 1, 2, 3, 3}, {7}), Run1("Ceil", {x}, DT_FLOAT));
  ExpectTensorEqual(AsTensor<float>({-3, -2, -1, 0, 1, 2, 2}, {7}), Run1("Floor", {x}, DT_FLOAT));
  Tensor b(DT_BFLOAT16, TensorShape({2}));
  b.flat<bfloat16>()[0] = bfloat16(0.5f);
  b.flat<bfloat16>()[1] = bfloat16(1.5f);
  Tensor want(DT_BFLOAT16, TensorShape({2}));
  want.flat<bfloat16>()[0] = bfloat16(0.0f);
  want.flat<bfloat16>()[1] = bfloat16(2.0f);
  ExpectTensorNear(want, Run1("Round", {b}, DT_BFLOAT16), 0);
}

TEST(MathUnaryTest, SignedFunctionsOnIntsAndFloats) {
  Tensor i = AsTensor<int32_t>({-3, 0, 2}, {3});
  ExpectTensorEqual(AsTensor<int32_t>({3, 0, -2}, {3}), Run1("Neg", {i}, DT_INT32));
  ExpectTensorEqual(AsTensor<int32_t>({3, 0, 2}, {3}), Run1("Abs", {i}, DT_INT32));
  ExpectTensorEqual(AsTensor<int32_t>({-1, 0, 1}, {3}), Run1("Sign", {i}, DT_INT32));
  ExpectTensorEqual(AsTensor<int32_t>({9, 0, 4}, {3}), Run1("Square", {i}, DT_INT32));
  Tensor f = AsTensor<float>({-1.5f, 0, 2}, {3});
  ExpectTensorNear(AsTensor<float>({1.5f, 0, -2}, {3}), Run1("Neg", {f}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({-1, 0, 1}, {3}), Run1("Sign", {f}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({2.25f, 0, 4}, {3}), Run1("Square", {f}, DT_FLOAT));
}

TEST(MathUnaryTest, ScalarsEmptyAndBfloat16) {
  ExpectTensorNear(Tensor::Scalar<float>(3), Run1("Sqrt", {Tensor::Scalar<float>(9)}, DT_FLOAT));
  Tensor empty = Run1("Exp", {AsTensor<float>({}, {0, 3})}, DT_FLOAT);
  EXPECT_EQ(empty.shape().DebugString(), "[0,3]");
  Tensor b(DT_BFLOAT16, TensorShape({2}));
  b.flat<bfloat16>()[0] = bfloat16(0.0f);
  b.flat<bfloat16>()[1] = bfloat16(1.0f);
  Tensor want(DT_BFLOAT16, TensorShape({2}));
  want.flat<bfloat16>()[0] = bfloat16(1.0f);
  want.flat<bfloat16>()[1] = bfloat16(2.71875f);
  ExpectTensorNear(want, Run1("Exp", {b}, DT_BFLOAT16), 1e-2);
}

TEST(MathUnaryTest, LargeInputIsSharded) {
  std::vector<float> x(100000), want(100000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(i % 100) * 0.01f;
    want[i] = std::exp(x[i]);
  }
  ExpectTensorNear(AsTensor<float>(want, {100000}),
                   Run1("Exp", {AsTensor<float>(x, {100000})}, DT_FLOAT));
}

TEST(MathUnaryGradTest, GradientsFromOutputs) {
  Tensor y = AsTensor<float>({0.5f, 0.25f}, {2});
  Tensor dy = AsTensor<float>({2, 4}, {2});
  ExpectTensorNear(AsTensor<float>({0.5f, 0.75f}, {2}), Run1("SigmoidGrad", {y, dy}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({1.5f, 3.75f}, {2}), Run1("TanhGrad", {y, dy}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({2, 8}, {2}), Run1("SqrtGrad", {y, dy}, DT_FLOAT));
  ExpectTensorNear(AsTensor<float>({-0.125f, -0.03125f}, {2}),
                   Run1("RsqrtGrad", {y, dy}, DT_FLOAT));
}

TEST(MathUnaryGradTest, ShapesMustMatch) {
  auto out =
      RunKernel("SigmoidGrad", {AsTensor<float>({1, 2}, {2}), AsTensor<float>({1, 2, 3}, {3})},
                {{"T", DT_FLOAT}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("[2] vs [3]"));
}

}  // namespace
}  // namespace distflow
