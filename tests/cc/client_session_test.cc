#include "distflow/cc/client_session.h"

#include "distflow/cc/ops/standard_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

TEST(ClientSessionTest, RunsFeedsAndExtends) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto y = ops::AddV2(root, ops::Mul(root, x, 2.0f), 1.0f);
  ClientSession session(root);
  ASSERT_TRUE(session.status().ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({{x, {1.0f, 2.0f, 3.0f}}}, {y}, &out).ok());
  EXPECT_EQ(out[0].DebugString(), "Tensor<type: float32 shape: [3] values: [3 5 7]>");

  // Nodes added after the first run reach the session on the next one.
  auto z = ops::Square(root, y);
  ASSERT_TRUE(session.Run({{x, {1.0f, 2.0f}}}, {z, y}, &out).ok());
  EXPECT_EQ(out[0].DebugString(), "Tensor<type: float32 shape: [2] values: [9 25]>");
  EXPECT_EQ(out[1].flat<float>()[1], 5.0f);
}

TEST(ClientSessionTest, ErrorsNameTheTensor) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto y = ops::Neg(root.WithOpName("y"), x);
  ClientSession session(root);
  std::vector<Tensor> out;
  absl::Status s = session.Run({{x, {1, 2}}}, {y}, &out);  // int32 fed to a float placeholder
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("x"));
  s = session.Run({y}, &out);  // x not fed
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("x"));
}

}  // namespace
}  // namespace distflow

namespace distflow {
namespace {

TEST(ClientSessionControlFlowTest, SwitchAndMergeBuildACond) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL);
  ops::Switch sw(root.WithOpName("sw"), x, p);
  auto taken = ops::Mul(root, sw.output_true, 10.0f);
  auto other = ops::Neg(root, sw.output_false);
  ops::Merge merge(root.WithOpName("merge"), {other, taken});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({{x, 2.0f}, {p, true}}, {merge.output, merge.value_index}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 20.0f);
  EXPECT_EQ(out[1].scalar<int32_t>(), 1);
  ASSERT_TRUE(session.Run({{x, 2.0f}, {p, false}}, {merge.output, merge.value_index}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), -2.0f);
  EXPECT_EQ(out[1].scalar<int32_t>(), 0);
}

}  // namespace
}  // namespace distflow
