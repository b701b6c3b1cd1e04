// Ops that frozen and training graphs written by TensorFlow hold: Floor and
// DynamicStitch (the legacy Variable is VariableV2's kernel under its old
// name; _SwitchN runs in the Case tests of function_runtime_test).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectTensorEqual;
using test::RunKernel;
using ::testing::HasSubstr;

TEST(TfGraphOpsTest, Floor) {
  auto out =
      RunKernel("Floor", {AsTensor<float>({-1.5f, -0.0f, 0.5f, 2.0f, 2.9f})}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<float>({-2, -0.0f, 0, 2, 2}), (*out)[0]);
}

TEST(TfGraphOpsTest, DynamicStitchInterleavesRowsLaterInputsWin) {
  // The Mean gradient's use: stitch [0, 1] and [1] with [4, 5] and [7].
  auto out =
      RunKernel("DynamicStitch",
                {AsTensor<int32_t>({0, 1}), AsTensor<int32_t>({1, 3}),
                 AsTensor<float>({1, 2, 3, 4}, {2, 2}), AsTensor<float>({5, 6, 7, 8}, {2, 2})},
                {{"N", int64_t{2}}, {"T", DT_FLOAT}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(AsTensor<float>({1, 2, 5, 6, 0, 0, 7, 8}, {4, 2}), (*out)[0]);
}

TEST(TfGraphOpsTest, DynamicStitchRejectsBadInput) {
  auto negative = RunKernel("DynamicStitch", {AsTensor<int32_t>({-1}), AsTensor<float>({1})},
                            {{"N", int64_t{1}}, {"T", DT_FLOAT}});
  EXPECT_THAT(negative.status().message(), HasSubstr("indices[0] holds -1, which is negative"));
  auto shapes = RunKernel("DynamicStitch",
                          {AsTensor<int32_t>({0, 1}), AsTensor<int32_t>({2}),
                           AsTensor<float>({1, 2}), AsTensor<float>({3, 4})},
                          {{"N", int64_t{2}}, {"T", DT_FLOAT}});
  EXPECT_THAT(shapes.status().message(), HasSubstr("data[1] has shape [2]"));
}

}  // namespace
}  // namespace distflow
