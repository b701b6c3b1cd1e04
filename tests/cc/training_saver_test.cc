// Saver writes TensorFlow's checkpoint format (one index, one data file per
// shard, the shards' temporary parts merged away) and restores from it, and
// still restores a checkpoint of the layout earlier distflow versions wrote
// (each shard a checkpoint of its own, "<prefix>.shard-K-of-N"). A save in
// phases (Snapshot, WriteSnapshot, Commit) writes the values of the
// snapshot whatever changes after it, and a write that fails leaves the
// index as it was.
#include <filesystem>
#include <vector>

#include "distflow/cc/client_session.h"
#include "distflow/cc/op_builder.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/core/env.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/training/saver.h"
#include "distflow/training/variable.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

class SaverTest : public ::testing::Test {
 protected:
  SaverTest()
      : dir_(fs::path(::testing::TempDir()) /
             ("saver_" +
              std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()))),
        root_(Scope::NewRootScope()),
        w_(root_.WithOpName("w"), ops::Const(root_, {{1.f, 2.f}, {3.f, 4.f}})),
        step_(root_.WithOpName("step"), ops::Const(root_, int64_t{5})),
        saver_(root_, {{"w", w_.handle(), DT_FLOAT, TensorShape({2, 2})},
                       {"step", step_.handle(), DT_INT64, TensorShape({})}}),
        session_(root_) {
    fs::remove_all(dir_);
    EXPECT_TRUE(root_.ok()) << root_.status();
    EXPECT_TRUE(session_.Run({}, {}, {w_.initializer(), step_.initializer()}, nullptr).ok());
  }
  ~SaverTest() override { fs::remove_all(dir_); }

  std::vector<float> W() {
    std::vector<Tensor> out;
    EXPECT_TRUE(session_.Run({w_.Read(root_)}, &out).ok());
    return std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end());
  }

  fs::path dir_;
  Scope root_;
  Variable w_;
  Variable step_;
  Saver saver_;
  ClientSession session_;
};

TEST_F(SaverTest, SavesTensorFlowsFormatAndRestores) {
  absl::StatusOr<std::string> prefix = saver_.Save(session_, dir_.string(), 5);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  EXPECT_EQ(*prefix, (dir_ / "model.ckpt-5").string());
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path().filename());
  std::sort(files.begin(), files.end());
  EXPECT_THAT(files,
              ElementsAre("checkpoint", "model.ckpt-5.data-00000-of-00001", "model.ckpt-5.index"));
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(*prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)->Names(), ElementsAre("step", "w"));

  ASSERT_TRUE(
      session_.Run({}, {}, {w_.Assign(root_, ops::Const(root_, {{0.f, 0.f}, {0.f, 0.f}}))}, nullptr)
          .ok());
  EXPECT_THAT(W(), ElementsAre(0, 0, 0, 0));
  ASSERT_TRUE(saver_.Restore(session_, *prefix).ok());
  EXPECT_THAT(W(), ElementsAre(1, 2, 3, 4));
}

TEST_F(SaverTest, RestoresTheShardLayoutOfEarlierVersions) {
  const std::string prefix = (dir_ / "model.ckpt-9").string();
  {
    BundleWriter old(prefix + ".shard-0-of-1");
    ASSERT_TRUE(old.Add("w", Tensor::FromVector<float>({9, 8, 7, 6}, TensorShape({2, 2}))).ok());
    ASSERT_TRUE(old.Add("step", Tensor::Scalar<int64_t>(9)).ok());
    ASSERT_TRUE(old.Finish().ok());
  }
  ASSERT_TRUE(saver_.Restore(session_, prefix).ok());
  EXPECT_THAT(W(), ElementsAre(9, 8, 7, 6));
}

// The float values of tensor `name` in checkpoint `prefix`.
std::vector<float> ReadFloats(const std::string& prefix, const std::string& name) {
  absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(prefix);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  absl::StatusOr<Tensor> t = (*r)->Read(name, DT_FLOAT);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  return std::vector<float>(t->flat<float>().begin(), t->flat<float>().end());
}

TEST_F(SaverTest, WritesTheSnapshotWhateverChangesAfterIt) {
  absl::StatusOr<std::string> first = saver_.Save(session_, dir_.string(), 4);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(saver_.Snapshot(session_).ok());
  // Every way a variable changes after the snapshot: in place through an
  // optimizer's apply kernel and AssignAdd (both copy a shared buffer
  // first), and replaced by an assignment.
  const Output alpha = ops::Const(root_, 1.f);
  const Output delta = ops::Const(root_, {{1.f, 1.f}, {1.f, 1.f}});
  const Operation apply(ops::internal::BuildOp(root_, "ResourceApplyGradientDescent",
                                               {Input(w_.handle()), Input(alpha), Input(delta)}));
  ASSERT_TRUE(root_.ok()) << root_.status();
  ASSERT_TRUE(session_.Run({}, {}, {apply}, nullptr).ok());
  ASSERT_TRUE(session_
                  .Run({}, {},
                       {w_.AssignAdd(root_, ops::Const(root_, {{10.f, 10.f}, {10.f, 10.f}}))},
                       nullptr)
                  .ok());
  EXPECT_THAT(W(), ElementsAre(10, 11, 12, 13));
  ASSERT_TRUE(
      session_.Run({}, {}, {step_.Assign(root_, ops::Const(root_, int64_t{6}))}, nullptr).ok());

  absl::StatusOr<std::string> prefix = saver_.WriteSnapshot(session_, dir_.string(), 5);
  ASSERT_TRUE(prefix.ok()) << prefix.status();
  EXPECT_THAT(ReadFloats(*prefix, "w"), ElementsAre(1, 2, 3, 4));
  // Written but not committed: not the latest yet.
  EXPECT_EQ(Saver::LatestCheckpoint(dir_.string()).value_or(""), *first);
  ASSERT_TRUE(saver_.Commit(dir_.string(), *prefix).ok());
  EXPECT_EQ(Saver::LatestCheckpoint(dir_.string()).value_or(""), *prefix);

  ASSERT_TRUE(saver_.Restore(session_, *prefix).ok());
  EXPECT_THAT(W(), ElementsAre(1, 2, 3, 4));
  std::vector<Tensor> step;
  ASSERT_TRUE(session_.Run({step_.Read(root_)}, &step).ok());
  EXPECT_EQ(step[0].scalar<int64_t>(), 5);
  // The snapshot was released with the write: writing again needs a new one.
  EXPECT_FALSE(saver_.WriteSnapshot(session_, dir_.string(), 8).ok());
}

TEST_F(SaverTest, AWriteWhoseTaskFailedLeavesTheIndexAsItWas) {
  absl::StatusOr<std::string> first = saver_.Save(session_, dir_.string(), 5);
  ASSERT_TRUE(first.ok()) << first.status();
  const absl::StatusOr<std::string> index = ReadFileToString((dir_ / "checkpoint").string());
  ASSERT_TRUE(index.ok());
  ASSERT_TRUE(saver_.Snapshot(session_).ok());
  // A fresh session has devices of its own: as a task that restarted after
  // the snapshot, it holds no snapshot to write.
  ClientSession restarted(root_);
  absl::StatusOr<std::string> written = saver_.WriteSnapshot(restarted, dir_.string(), 7);
  EXPECT_FALSE(written.ok());
  EXPECT_EQ(ReadFileToString((dir_ / "checkpoint").string()).value_or(""), *index);
  EXPECT_EQ(Saver::LatestCheckpoint(dir_.string()).value_or(""), *first);
  EXPECT_FALSE(fs::exists(dir_ / "model.ckpt-7.index"));
}

TEST_F(SaverTest, AWriteNeverReplacesAListedCheckpoint) {
  absl::StatusOr<std::string> first = saver_.Save(session_, dir_.string(), 5);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(
      session_.Run({}, {}, {w_.Assign(root_, ops::Const(root_, {{0.f, 0.f}, {0.f, 0.f}}))}, nullptr)
          .ok());
  ASSERT_TRUE(saver_.Snapshot(session_).ok());
  absl::StatusOr<std::string> again = saver_.WriteSnapshot(session_, dir_.string(), 5);
  EXPECT_TRUE(absl::IsAlreadyExists(again.status())) << again.status();
  EXPECT_THAT(ReadFloats(*first, "w"), ElementsAre(1, 2, 3, 4));
}

}  // namespace
}  // namespace distflow
