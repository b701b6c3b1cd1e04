// Saver writes TensorFlow's checkpoint format (one index, one data file per
// shard, the shards' temporary parts merged away) and restores from it, and
// still restores a checkpoint of the layout earlier distflow versions wrote
// (each shard a checkpoint of its own, "<prefix>.shard-K-of-N").
#include <filesystem>
#include <vector>

#include "distflow/cc/client_session.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/training/saver.h"
#include "distflow/training/variable.h"
#include "distflow/framework/tensor_bundle.h"
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

}  // namespace
}  // namespace distflow
