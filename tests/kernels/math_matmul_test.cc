// Tests for MatMul and BatchMatMulV2, against a naive triple loop for the
// large (pool-split) cases.
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

Tensor MatMul(const Tensor& a, const Tensor& b, bool ta = false, bool tb = false) {
  auto out =
      RunKernel("MatMul", {a, b}, {{"T", a.dtype()}, {"transpose_a", ta}, {"transpose_b", tb}});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

// Row-major rows x cols matrix with small deterministic values.
std::vector<float> Pattern(int64_t rows, int64_t cols, int seed) {
  std::vector<float> v(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    v[i] = static_cast<float>((i * 31 + seed * 17) % 13) * 0.25f - 1.5f;
  }
  return v;
}

std::vector<float> NaiveMatMul(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                               int64_t k, int64_t n) {
  std::vector<float> c(m * n, 0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
    }
  }
  return c;
}

std::vector<float> Transpose(const std::vector<float>& v, int64_t rows, int64_t cols) {
  std::vector<float> t(v.size());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = v[i * cols + j];
  }
  return t;
}

TEST(MathMatMulTest, SmallWithTransposes) {
  Tensor a = AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = AsTensor<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  const Tensor want = AsTensor<float>({58, 64, 139, 154}, {2, 2});
  ExpectTensorNear(want, MatMul(a, b));
  Tensor at = AsTensor<float>({1, 4, 2, 5, 3, 6}, {3, 2});
  Tensor bt = AsTensor<float>({7, 9, 11, 8, 10, 12}, {2, 3});
  ExpectTensorNear(want, MatMul(at, b, true, false));
  ExpectTensorNear(want, MatMul(a, bt, false, true));
  ExpectTensorNear(want, MatMul(at, bt, true, true));
}

TEST(MathMatMulTest, IntegerTypes) {
  Tensor a = AsTensor<int32_t>({1, 2, 3, 4}, {2, 2});
  Tensor b = AsTensor<int32_t>({5, 6, 7, 8}, {2, 2});
  ExpectTensorEqual(AsTensor<int32_t>({19, 22, 43, 50}, {2, 2}), MatMul(a, b));
  ExpectTensorEqual(AsTensor<int32_t>({23, 31, 34, 46}, {2, 2}), MatMul(a, b, true, true));
  ExpectTensorEqual(AsTensor<int64_t>({17, 23, 39, 53}, {2, 2}),
                    MatMul(AsTensor<int64_t>({1, 2, 3, 4}, {2, 2}),
                           AsTensor<int64_t>({5, 6, 7, 8}, {2, 2}), false, true));
  ExpectTensorNear(AsTensor<double>({11}, {1, 1}),
                   MatMul(AsTensor<double>({1, 2}, {1, 2}), AsTensor<double>({3, 4}, {2, 1})));
}

TEST(MathMatMulTest, Bfloat16) {
  Tensor a(DT_BFLOAT16, TensorShape({1, 2}));
  Tensor b(DT_BFLOAT16, TensorShape({2, 1}));
  a.flat<bfloat16>()[0] = bfloat16(1.0f);
  a.flat<bfloat16>()[1] = bfloat16(2.0f);
  b.flat<bfloat16>()[0] = bfloat16(3.0f);
  b.flat<bfloat16>()[1] = bfloat16(0.5f);
  Tensor want(DT_BFLOAT16, TensorShape({1, 1}));
  want.flat<bfloat16>()[0] = bfloat16(4.0f);
  ExpectTensorNear(want, MatMul(a, b));
}

TEST(MathMatMulTest, EmptyInnerDimensionGivesZeros) {
  ExpectTensorNear(AsTensor<float>({0, 0, 0, 0, 0, 0}, {2, 3}),
                   MatMul(AsTensor<float>({}, {2, 0}), AsTensor<float>({}, {0, 3})));
  EXPECT_EQ(
      MatMul(AsTensor<float>({}, {0, 3}), AsTensor<float>({1, 2, 3}, {3, 1})).shape().DebugString(),
      "[0,1]");
}

TEST(MathMatMulTest, LargeProductsSplitAcrossThePool) {
  // Tall (row blocks) and wide (column blocks) outputs, all transposes.
  for (const auto& [m, k, n] :
       {std::tuple<int64_t, int64_t, int64_t>{320, 128, 100}, {40, 128, 900}}) {
    const std::vector<float> a = Pattern(m, k, 1), b = Pattern(k, n, 2);
    const Tensor want = AsTensor<float>(NaiveMatMul(a, b, m, k, n), {m, n});
    const Tensor ta = AsTensor<float>(a, {m, k}), tb = AsTensor<float>(b, {k, n});
    const Tensor ta_t = AsTensor<float>(Transpose(a, m, k), {k, m});
    const Tensor tb_t = AsTensor<float>(Transpose(b, k, n), {n, k});
    ExpectTensorNear(want, MatMul(ta, tb), 1e-4);
    ExpectTensorNear(want, MatMul(ta_t, tb, true, false), 1e-4);
    ExpectTensorNear(want, MatMul(ta, tb_t, false, true), 1e-4);
    ExpectTensorNear(want, MatMul(ta_t, tb_t, true, true), 1e-4);
  }
}

TEST(MathMatMulTest, InnerDimensionMismatch) {
  auto out = RunKernel("MatMul",
                       {AsTensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}),
                        AsTensor<float>(std::vector<float>(20, 1), {4, 5})},
                       {{"T", DT_FLOAT}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("inner dimensions must agree: [2,3] vs [4,5]"));
  out = RunKernel("MatMul", {AsTensor<float>({1, 2}, {2}), AsTensor<float>({1, 2}, {2, 1})},
                  {{"T", DT_FLOAT}});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MathBatchMatMulTest, BatchesAndAdjoints) {
  // Two 2x2 times 2x1.
  Tensor x = AsTensor<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  Tensor y = AsTensor<float>({1, 1, 2, 0}, {2, 2, 1});
  auto out = RunKernel("BatchMatMulV2", {x, y}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear(AsTensor<float>({3, 7, 10, 14}, {2, 2, 1}), (*out)[0]);
  out = RunKernel("BatchMatMulV2", {x, y}, {{"T", DT_FLOAT}, {"adj_x", true}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear(AsTensor<float>({4, 6, 10, 12}, {2, 2, 1}), (*out)[0]);
  Tensor yt = AsTensor<float>({1, 1, 2, 0}, {2, 1, 2});
  out = RunKernel("BatchMatMulV2", {x, yt}, {{"T", DT_FLOAT}, {"adj_y", true}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear(AsTensor<float>({3, 7, 10, 14}, {2, 2, 1}), (*out)[0]);
}

TEST(MathBatchMatMulTest, BroadcastsBatchDimensions) {
  // x [2,1,1,2] with y [3,2,1] -> [2,3,1,1].
  Tensor x = AsTensor<int32_t>({1, 2, 3, 4}, {2, 1, 1, 2});
  Tensor y = AsTensor<int32_t>({1, 0, 0, 1, 1, 1}, {3, 2, 1});
  auto out = RunKernel("BatchMatMulV2", {x, y}, {{"T", DT_INT32}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int32_t>({1, 2, 3, 3, 4, 7}, {2, 3, 1, 1}), (*out)[0]);
  // Plain matrices broadcast against a batch.
  out = RunKernel("BatchMatMulV2", {AsTensor<int32_t>({1, 2}, {1, 2}), y}, {{"T", DT_INT32}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<int32_t>({1, 2, 3}, {3, 1, 1}), (*out)[0]);
}

TEST(MathBatchMatMulTest, ManyBatchesInParallel) {
  const int64_t batches = 64, m = 8, k = 16, n = 8;
  std::vector<float> x, y, want;
  for (int64_t i = 0; i < batches; ++i) {
    const std::vector<float> a = Pattern(m, k, static_cast<int>(i));
    const std::vector<float> b = Pattern(k, n, static_cast<int>(i) + 100);
    const std::vector<float> c = NaiveMatMul(a, b, m, k, n);
    x.insert(x.end(), a.begin(), a.end());
    y.insert(y.end(), b.begin(), b.end());
    want.insert(want.end(), c.begin(), c.end());
  }
  auto out = RunKernel("BatchMatMulV2",
                       {AsTensor<float>(x, {batches, m, k}), AsTensor<float>(y, {batches, k, n})},
                       {{"T", DT_FLOAT}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorNear(AsTensor<float>(want, {batches, m, n}), (*out)[0], 1e-4);
}

TEST(MathBatchMatMulTest, Errors) {
  auto out = RunKernel("BatchMatMulV2",
                       {AsTensor<float>(std::vector<float>(12, 1), {2, 2, 3}),
                        AsTensor<float>(std::vector<float>(8, 1), {2, 2, 2})},
                       {{"T", DT_FLOAT}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("inner dimensions must agree: [2,2,3] vs [2,2,2]"));
  out = RunKernel("BatchMatMulV2",
                  {AsTensor<float>(std::vector<float>(12, 1), {3, 2, 2}),
                   AsTensor<float>(std::vector<float>(8, 1), {2, 2, 2})},
                  {{"T", DT_FLOAT}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("batch dimensions are incompatible"));
}

}  // namespace
}  // namespace distflow
