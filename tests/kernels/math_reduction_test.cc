// Tests for the reductions, ArgMax/ArgMin, AddN and BroadcastGradientArgs.
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

// Runs reduction `op` over `axes` (int32) with T and keep_dims.
absl::StatusOr<std::vector<Tensor>> Reduce(const std::string& op, const Tensor& input,
                                           std::vector<int32_t> axes, bool keep_dims = false) {
  std::vector<test::KernelAttr> attrs = {{"keep_dims", keep_dims}};
  if (input.dtype() != DT_BOOL) attrs.push_back({"T", input.dtype()});
  const int64_t n = static_cast<int64_t>(axes.size());
  return RunKernel(op, {input, AsTensor<int32_t>(axes, {n})}, attrs);
}

Tensor ReduceOk(const std::string& op, const Tensor& input, std::vector<int32_t> axes,
                bool keep_dims = false) {
  auto out = Reduce(op, input, axes, keep_dims);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

Tensor Bools(std::vector<bool> v, std::initializer_list<int64_t> shape) {
  Tensor t(DT_BOOL, TensorShape(shape));
  for (size_t i = 0; i < v.size(); ++i) t.flat<bool>()[i] = v[i];
  return t;
}

TEST(MathReductionTest, SumOverEachAxis) {
  Tensor x = AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  ExpectTensorNear(AsTensor<float>({5, 7, 9}, {3}), ReduceOk("Sum", x, {0}));
  ExpectTensorNear(AsTensor<float>({6, 15}, {2}), ReduceOk("Sum", x, {1}));
  ExpectTensorNear(AsTensor<float>({6, 15}, {2}), ReduceOk("Sum", x, {-1}));
  ExpectTensorNear(Tensor::Scalar<float>(21), ReduceOk("Sum", x, {0, 1}));
  ExpectTensorNear(AsTensor<float>({21}, {1, 1}), ReduceOk("Sum", x, {1, 0}, /*keep_dims=*/true));
  ExpectTensorNear(AsTensor<float>({6, 15}, {2, 1}), ReduceOk("Sum", x, {1}, /*keep_dims=*/true));
  // No axes: the input unchanged.
  ExpectTensorNear(x, ReduceOk("Sum", x, {}));
}

TEST(MathReductionTest, ScalarAxisInt64) {
  auto out = RunKernel("Sum", {AsTensor<int64_t>({1, 2, 3, 4}, {2, 2}), Tensor::Scalar<int64_t>(1)},
                       {{"T", DT_INT64}, {"Tidx", DT_INT64}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int64_t>({3, 7}, {2}), (*out)[0]);
}

TEST(MathReductionTest, MiddleAndAlternatingAxes) {
  // [2,3,2]: element (i,j,k) = 6i + 2j + k.
  std::vector<int32_t> v(12);
  for (int i = 0; i < 12; ++i) v[i] = i;
  Tensor x = AsTensor<int32_t>(v, {2, 3, 2});
  ExpectTensorEqual(AsTensor<int32_t>({6, 9, 24, 27}, {2, 2}), ReduceOk("Sum", x, {1}));
  ExpectTensorEqual(AsTensor<int32_t>({30, 36}, {2}), ReduceOk("Sum", x, {0, 1}));
  ExpectTensorEqual(AsTensor<int32_t>({14, 22, 30}, {1, 3, 1}),
                    ReduceOk("Sum", x, {0, 2}, /*keep_dims=*/true));
  ExpectTensorEqual(AsTensor<int32_t>({10, 11}, {2}), ReduceOk("Max", x, {0, 1}));
  ExpectTensorEqual(AsTensor<int32_t>({0, 6}, {2}), ReduceOk("Min", x, {1, 2}));
}

TEST(MathReductionTest, MeanProdMaxMin) {
  Tensor x = AsTensor<double>({1, -2, 3, 4, 5, -6}, {2, 3});
  ExpectTensorNear(AsTensor<double>({2.5, 1.5, -1.5}, {3}), ReduceOk("Mean", x, {0}));
  ExpectTensorNear(AsTensor<double>({-6, -120}, {2}), ReduceOk("Prod", x, {1}));
  ExpectTensorNear(AsTensor<double>({3, 5}, {2}), ReduceOk("Max", x, {1}));
  ExpectTensorNear(AsTensor<double>({1, -2, -6}, {3}), ReduceOk("Min", x, {0}));
  // Integer mean truncates.
  ExpectTensorEqual(AsTensor<int32_t>({2, 5}, {2}),
                    ReduceOk("Mean", AsTensor<int32_t>({1, 2, 4, 4, 5, 6}, {2, 3}), {1}));
}

TEST(MathReductionTest, MaxPropagatesNaN) {
  Tensor x = AsTensor<float>({1, NAN, 3, 4}, {2, 2});
  ExpectTensorNear(AsTensor<float>({NAN, 4}, {2}), ReduceOk("Max", x, {1}));
  ExpectTensorNear(AsTensor<float>({3, NAN}, {2}), ReduceOk("Max", x, {0}));
}

TEST(MathReductionTest, EmptyReductionsGiveIdentity) {
  Tensor x = AsTensor<float>({}, {0, 3});
  ExpectTensorNear(AsTensor<float>({0, 0, 0}, {3}), ReduceOk("Sum", x, {0}));
  ExpectTensorNear(AsTensor<float>({1, 1, 1}, {3}), ReduceOk("Prod", x, {0}));
  const float inf = std::numeric_limits<float>::infinity();
  ExpectTensorNear(AsTensor<float>({-inf, -inf, -inf}, {3}), ReduceOk("Max", x, {0}));
  ExpectTensorNear(AsTensor<float>({inf, inf, inf}, {3}), ReduceOk("Min", x, {0}));
  ExpectTensorNear(AsTensor<float>({NAN, NAN, NAN}, {3}), ReduceOk("Mean", x, {0}));
  // Reducing the non-empty axis leaves an empty output.
  EXPECT_EQ(ReduceOk("Sum", x, {1}).shape().DebugString(), "[0]");
  Tensor xi = AsTensor<int32_t>({}, {0});
  ExpectTensorEqual(Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::lowest()),
                    ReduceOk("Max", xi, {0}));
  ExpectTensorEqual(Tensor::Scalar<int32_t>(0), ReduceOk("Mean", xi, {0}));
  ExpectTensorEqual(Bools({true}, {}), ReduceOk("All", Bools({}, {0}), {0}));
  ExpectTensorEqual(Bools({false}, {}), ReduceOk("Any", Bools({}, {0}), {0}));
}

TEST(MathReductionTest, ScalarInput) {
  ExpectTensorNear(Tensor::Scalar<float>(4), ReduceOk("Sum", Tensor::Scalar<float>(4), {}));
}

TEST(MathReductionTest, AllAny) {
  Tensor x = Bools({true, false, true, true}, {2, 2});
  ExpectTensorEqual(Bools({false, true}, {2}), ReduceOk("All", x, {1}));
  ExpectTensorEqual(Bools({true, true}, {2}), ReduceOk("Any", x, {1}));
  ExpectTensorEqual(Bools({true, false}, {2}), ReduceOk("All", x, {0}));
  ExpectTensorEqual(Bools({false}, {}), ReduceOk("All", x, {0, 1}));
}

TEST(MathReductionTest, BadAxes) {
  Tensor x = AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto out = Reduce("Sum", x, {2});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("Invalid reduction dimension 2 for input with 2 dimensions"));
  out = Reduce("Max", x, {-3});
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Invalid reduction dimension -3"));
  out = Reduce("Mean", x, {1, -1});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Duplicate reduction dimension -1"));
}

TEST(MathReductionTest, LargeReductionsMatchScalarLoops) {
  // Big enough to shard: rows reduced in parallel, and the column sum that
  // folds private partials.
  const int64_t rows = 1000, cols = 300;
  std::vector<double> v(rows * cols), row_sum(rows, 0), col_sum(cols, 0);
  double total = 0;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const double x = static_cast<double>((i * 7 + j * 3) % 11) - 5;
      v[i * cols + j] = x;
      row_sum[i] += x;
      col_sum[j] += x;
      total += x;
    }
  }
  Tensor x = AsTensor<double>(v, {rows, cols});
  ExpectTensorNear(AsTensor<double>(row_sum, {rows}), ReduceOk("Sum", x, {1}));
  ExpectTensorNear(AsTensor<double>(col_sum, {cols}), ReduceOk("Sum", x, {0}));
  ExpectTensorNear(Tensor::Scalar<double>(total), ReduceOk("Sum", x, {0, 1}));
}

TEST(MathReductionTest, Bfloat16Sum) {
  Tensor x(DT_BFLOAT16, TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i) x.flat<bfloat16>()[i] = bfloat16(static_cast<float>(i));
  Tensor want(DT_BFLOAT16, TensorShape({2}));
  want.flat<bfloat16>()[0] = bfloat16(2.0f);
  want.flat<bfloat16>()[1] = bfloat16(4.0f);
  ExpectTensorNear(want, ReduceOk("Sum", x, {0}));
}

TEST(MathArgTest, ArgMaxArgMin) {
  Tensor x = AsTensor<float>({1, 9, 3, 7, 2, 9}, {2, 3});
  auto out = RunKernel("ArgMax", {x, Tensor::Scalar<int32_t>(1)}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int64_t>({1, 2}, {2}), (*out)[0]);
  out = RunKernel("ArgMax", {x, Tensor::Scalar<int32_t>(0)}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int64_t>({1, 0, 1}, {3}), (*out)[0]);
  out = RunKernel("ArgMin", {x, Tensor::Scalar<int64_t>(-1)},
                  {{"T", DT_FLOAT}, {"Tidx", DT_INT64}, {"output_type", DT_INT32}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int32_t>({0, 1}, {2}), (*out)[0]);
}

TEST(MathArgTest, TiesPickTheFirstAndIntInputs) {
  auto out = RunKernel("ArgMax", {AsTensor<int32_t>({4, 4, 1}, {3}), Tensor::Scalar<int32_t>(0)},
                       {{"T", DT_INT32}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(Tensor::Scalar<int64_t>(0), (*out)[0]);
}

TEST(MathArgTest, Errors) {
  Tensor x = AsTensor<float>({1, 2}, {1, 2});
  auto out = RunKernel("ArgMax", {x, Tensor::Scalar<int32_t>(2)}, {{"T", DT_FLOAT}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("Expected dimension in the range [-2, 2), but got 2"));
  out = RunKernel("ArgMin", {AsTensor<float>({}, {2, 0}), Tensor::Scalar<int32_t>(1)},
                  {{"T", DT_FLOAT}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("is empty in shape [2,0]"));
}

TEST(MathAddNTest, SumsInputs) {
  auto out = RunKernel("AddN",
                       {AsTensor<float>({1, 2}, {2}), AsTensor<float>({10, 20}, {2}),
                        AsTensor<float>({100, 200}, {2})},
                       {{"T", DT_FLOAT}, {"N", int64_t{3}}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear(AsTensor<float>({111, 222}, {2}), (*out)[0]);
  out = RunKernel("AddN", {Tensor::Scalar<int64_t>(5)}, {{"T", DT_INT64}, {"N", int64_t{1}}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(Tensor::Scalar<int64_t>(5), (*out)[0]);
  out = RunKernel("AddN", {AsTensor<int32_t>({}, {0, 3}), AsTensor<int32_t>({}, {0, 3})},
                  {{"T", DT_INT32}, {"N", int64_t{2}}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape().DebugString(), "[0,3]");
}

TEST(MathAddNTest, ShapesMustMatch) {
  auto out = RunKernel("AddN", {AsTensor<float>({1, 2}, {2}), AsTensor<float>({1}, {1})},
                       {{"T", DT_FLOAT}, {"N", int64_t{2}}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("input 0 has [2], input 1 has [1]"));
}

TEST(MathBroadcastGradientArgsTest, ReductionAxes) {
  struct Case {
    std::vector<int32_t> s0, s1, r0, r1;
  };
  const Case cases[] = {
      {{2, 3}, {2, 3}, {}, {}}, {{2, 3}, {3}, {}, {0}}, {{2, 1}, {1, 3}, {1}, {0}},
      {{}, {2, 3}, {0, 1}, {}}, {{1}, {1}, {0}, {0}},   {{4, 1, 5}, {3, 1}, {1}, {0, 2}},
  };
  for (const Case& c : cases) {
    auto out = RunKernel("BroadcastGradientArgs",
                         {AsTensor<int32_t>(c.s0, {static_cast<int64_t>(c.s0.size())}),
                          AsTensor<int32_t>(c.s1, {static_cast<int64_t>(c.s1.size())})});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectTensorEqual(AsTensor<int32_t>(c.r0, {static_cast<int64_t>(c.r0.size())}), (*out)[0]);
    ExpectTensorEqual(AsTensor<int32_t>(c.r1, {static_cast<int64_t>(c.r1.size())}), (*out)[1]);
  }
}

TEST(MathBroadcastGradientArgsTest, IncompatibleShapes) {
  auto out =
      RunKernel("BroadcastGradientArgs",
                {AsTensor<int64_t>({2, 3}, {2}), AsTensor<int64_t>({4}, {1})}, {{"T", DT_INT64}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("incompatible shapes for broadcasting: [2,3] and [4]"));
}

}  // namespace
}  // namespace distflow
