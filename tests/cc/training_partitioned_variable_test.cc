// PartitionedVariable and NumShards: how many shards a variable gets, the
// shards' names, shapes and ps devices, the value read back whole, and an
// optimizer updating every shard with its part of the gradient.
#include <vector>

#include "distflow/cc/client_session.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/training/device_setter.h"
#include "distflow/training/gradient_descent.h"
#include "distflow/training/partitioned_variable.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(NumShardsTest, KeepsShardsAboveTheMinimumAndBelowTheLimits) {
  const TensorShape shape({784, 256});  // 802 816 bytes of float
  EXPECT_EQ(NumShards(shape, DT_FLOAT, 0, 4), 1);
  EXPECT_EQ(NumShards(shape, DT_FLOAT, 100000, 1), 1);
  EXPECT_EQ(NumShards(shape, DT_FLOAT, 100000, 4), 4);
  EXPECT_EQ(NumShards(shape, DT_FLOAT, 300000, 4), 2);
  EXPECT_EQ(NumShards(shape, DT_FLOAT, 1000000, 4), 1);
  EXPECT_EQ(NumShards(TensorShape({3, 1000}), DT_FLOAT, 1, 8), 3);  // at most one row each
  EXPECT_EQ(NumShards(TensorShape({}), DT_FLOAT, 1, 8), 1);
}

TEST(PartitionedVariableTest, ShardsLiveRoundRobinAndReadBackWhole) {
  Scope root = Scope::NewRootScope();
  Scope ps = ReplicaDeviceSetter(root, 2, "");
  // Rows 0..4 of [5, 2]: shards of 3 and 2 rows.
  auto init = ops::Const(root, {{0.f, 1.f}, {2.f, 3.f}, {4.f, 5.f}, {6.f, 7.f}, {8.f, 9.f}});
  PartitionedVariable w(ps, "w", init, TensorShape({5, 2}), 2);
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_EQ(w.shards().size(), 2u);
  EXPECT_EQ(w.shards()[0].name(), "w/part_0");
  EXPECT_EQ(w.shards()[1].name(), "w/part_1");
  EXPECT_EQ(w.shards()[0].handle().node()->def().device(), "/job:ps/task:0");
  EXPECT_EQ(w.shards()[1].handle().node()->def().device(), "/job:ps/task:1");
  EXPECT_EQ(w.shards()[0].shape().DebugString(), "[3,2]");
  EXPECT_EQ(w.shards()[1].shape().DebugString(), "[2,2]");

  // One process: run it with the devices cleared.
  Scope local = Scope::NewRootScope();
  PartitionedVariable v(local, "v", ops::Const(local, {{0.f, 1.f}, {2.f, 3.f}, {4.f, 5.f}}),
                        TensorShape({3, 2}), 3);
  auto whole = v.Read(local);
  auto loss = ops::Sum(local, ops::Mul(local, whole, whole), {0, 1});
  GradientDescentOptimizer sgd(local, 0.5);
  absl::StatusOr<Operation> step = sgd.Minimize(loss, v.shards());
  ASSERT_TRUE(step.ok()) << step.status();
  ClientSession session(local);
  std::vector<Operation> inits;
  for (const Variable& s : v.shards()) inits.push_back(s.initializer());
  ASSERT_TRUE(session.Run({}, {}, inits, nullptr).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({whole}, &out).ok());
  EXPECT_THAT(out[0].flat<float>(), ElementsAre(0, 1, 2, 3, 4, 5));
  // d(sum x^2)/dx = 2x; x - 0.5 * 2x = 0 for every element of every shard.
  ASSERT_TRUE(session.Run({}, {}, {*step}, nullptr).ok());
  ASSERT_TRUE(session.Run({whole}, &out).ok());
  EXPECT_THAT(out[0].flat<float>(), ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(PartitionedVariableTest, OneShardIsThePlainVariable) {
  Scope root = Scope::NewRootScope();
  PartitionedVariable w(root, "dense/kernel", ops::Const(root, {{1.f}}), TensorShape({1, 1}), 1);
  ASSERT_TRUE(root.ok());
  ASSERT_EQ(w.shards().size(), 1u);
  EXPECT_EQ(w.shards()[0].name(), "dense/kernel");
}

TEST(PartitionedVariableTest, MoreShardsThanRowsIsAnError) {
  Scope root = Scope::NewRootScope();
  PartitionedVariable w(root, "w", ops::Const(root, {{1.f}, {2.f}}), TensorShape({2, 1}), 3);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(root.status().message(), HasSubstr("'w' of shape [2,1] cannot have 3 shards"));
}

}  // namespace
}  // namespace distflow
