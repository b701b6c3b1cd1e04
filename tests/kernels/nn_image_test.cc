// Conv2D, its backprops and the pooling kernels against hand-computed
// values, and their errors for bad shapes and unsupported attrs.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

Tensor F(std::vector<float> v, std::initializer_list<int64_t> shape) {
  return test::AsTensor<float>(std::move(v), shape);
}

// The 3x3 image 1..9, one channel.
Tensor Image() { return F({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1}); }

std::vector<test::KernelAttr> Conv(const char* padding, int64_t stride = 1) {
  return {{"T", DT_FLOAT}, {"strides", {1, stride, stride, 1}}, {"padding", padding}};
}

std::vector<test::KernelAttr> Pool(const char* padding, int64_t k, int64_t stride) {
  return {{"T", DT_FLOAT},
          {"ksize", {1, k, k, 1}},
          {"strides", {1, stride, stride, 1}},
          {"padding", padding}};
}

TEST(Conv2DTest, ValidAndSameWithAnAllOnesFilter) {
  const Tensor ones = F({1, 1, 1, 1}, {2, 2, 1, 1});
  auto valid = test::RunKernel("Conv2D", {Image(), ones}, Conv("VALID"));
  ASSERT_TRUE(valid.ok()) << valid.status();
  test::ExpectTensorNear(F({12, 16, 24, 28}, {1, 2, 2, 1}), (*valid)[0]);
  // SAME pads one row and column after the image (the extra padding goes last).
  auto same = test::RunKernel("Conv2D", {Image(), ones}, Conv("SAME"));
  ASSERT_TRUE(same.ok()) << same.status();
  test::ExpectTensorNear(F({12, 16, 9, 24, 28, 15, 15, 17, 9}, {1, 3, 3, 1}), (*same)[0]);
}

TEST(Conv2DTest, ChannelsAndStride) {
  // Two input channels, two filters: out[0] = sum of channel 0 over the
  // window, out[1] = channel 1 minus channel 0 at the window's first pixel.
  const Tensor in = F({1, 10, 2, 20, 3, 30, 4, 40}, {1, 2, 2, 2});
  const Tensor filter = F({1, -1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, {2, 2, 2, 2});
  auto out = test::RunKernel("Conv2D", {in, filter}, Conv("VALID", 2));
  ASSERT_TRUE(out.ok()) << out.status();
  test::ExpectTensorNear(F({10, 9}, {1, 1, 1, 2}), (*out)[0]);
}

TEST(Conv2DTest, BackpropsOfAOnePixelFilter) {
  // With a 1x1 filter of 2, d_input = 2 * d_out and d_filter = sum(x * d_out).
  const Tensor d_out = F({1, 0, 0, 0, 1, 0, 0, 0, 1}, {1, 3, 3, 1});
  auto d_in = test::RunKernel(
      "Conv2DBackpropInput",
      {test::AsTensor<int32_t>({1, 3, 3, 1}, {4}), F({2}, {1, 1, 1, 1}), d_out}, Conv("SAME"));
  ASSERT_TRUE(d_in.ok()) << d_in.status();
  test::ExpectTensorNear(F({2, 0, 0, 0, 2, 0, 0, 0, 2}, {1, 3, 3, 1}), (*d_in)[0]);
  auto d_filter =
      test::RunKernel("Conv2DBackpropFilter",
                      {Image(), test::AsTensor<int32_t>({1, 1, 1, 1}, {4}), d_out}, Conv("SAME"));
  ASSERT_TRUE(d_filter.ok()) << d_filter.status();
  test::ExpectTensorNear(F({15}, {1, 1, 1, 1}), (*d_filter)[0]);  // 1 + 5 + 9
}

TEST(Conv2DTest, ErrorsNameTheProblem) {
  auto depth = test::RunKernel("Conv2D", {Image(), F({1, 1}, {1, 1, 2, 1})}, Conv("VALID"));
  EXPECT_EQ(depth.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(depth.status().message(), HasSubstr("depth"));
  auto big = test::RunKernel("Conv2D", {Image(), F(std::vector<float>(16, 1), {4, 4, 1, 1})},
                             Conv("VALID"));
  EXPECT_EQ(big.status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<test::KernelAttr> nchw = Conv("VALID");
  nchw.push_back({"data_format", "NCHW"});
  auto unsupported = test::RunKernel("Conv2D", {Image(), F({1}, {1, 1, 1, 1})}, nchw);
  EXPECT_EQ(unsupported.status().code(), absl::StatusCode::kUnimplemented);
  auto bad_grad = test::RunKernel(
      "Conv2DBackpropInput",
      {test::AsTensor<int32_t>({1, 3, 3, 1}, {4}), F({2}, {1, 1, 1, 1}), F({1}, {1, 1, 1, 1})},
      Conv("SAME"));
  EXPECT_EQ(bad_grad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_grad.status().message(), HasSubstr("out_backprop"));
}

TEST(PoolTest, MaxAndAvg) {
  auto max = test::RunKernel("MaxPool", {Image()}, Pool("VALID", 2, 1));
  ASSERT_TRUE(max.ok()) << max.status();
  test::ExpectTensorNear(F({5, 6, 8, 9}, {1, 2, 2, 1}), (*max)[0]);
  // SAME with stride 2: windows at rows/cols {0,1} and {2}, clipped.
  auto max_same = test::RunKernel("MaxPool", {Image()}, Pool("SAME", 2, 2));
  ASSERT_TRUE(max_same.ok()) << max_same.status();
  test::ExpectTensorNear(F({5, 6, 8, 9}, {1, 2, 2, 1}), (*max_same)[0]);
  auto avg_same = test::RunKernel("AvgPool", {Image()}, Pool("SAME", 2, 2));
  ASSERT_TRUE(avg_same.ok()) << avg_same.status();
  // Means over the elements inside the image only.
  test::ExpectTensorNear(F({3, 4.5, 7.5, 9}, {1, 2, 2, 1}), (*avg_same)[0]);
}

TEST(PoolTest, Gradients) {
  auto max_grad = test::RunKernel(
      "MaxPoolGrad", {Image(), F({5, 6, 8, 9}, {1, 2, 2, 1}), F({1, 2, 3, 4}, {1, 2, 2, 1})},
      Pool("VALID", 2, 1));
  ASSERT_TRUE(max_grad.ok()) << max_grad.status();
  test::ExpectTensorNear(F({0, 0, 0, 0, 1, 2, 0, 3, 4}, {1, 3, 3, 1}), (*max_grad)[0]);
  auto avg_grad = test::RunKernel(
      "AvgPoolGrad", {test::AsTensor<int32_t>({1, 3, 3, 1}, {4}), F({4, 2, 2, 1}, {1, 2, 2, 1})},
      Pool("SAME", 2, 2));
  ASSERT_TRUE(avg_grad.ok()) << avg_grad.status();
  test::ExpectTensorNear(F({1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 3, 3, 1}), (*avg_grad)[0]);
  auto mismatch = test::RunKernel("MaxPoolGrad",
                                  {Image(), F({5, 6, 8, 9}, {1, 2, 2, 1}), F({1, 2}, {1, 1, 2, 1})},
                                  Pool("VALID", 2, 1));
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatch.status().message(), HasSubstr("grad"));
}

}  // namespace
}  // namespace distflow
