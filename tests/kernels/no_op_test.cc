#include "kernel_test_util.h"

namespace distflow {
namespace {

TEST(NoOpTest, RunsWithNoOutputs) {
  auto out = test::RunKernel("NoOp", {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->empty());
}

TEST(KernelTestUtilTest, UnknownOp) {
  auto out = test::RunKernel("NoSuchOp", {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace distflow
