// The "checkpoint" state file Saver keeps: a missing one means no
// checkpoint; a damaged one is DataLoss naming the file, never a silent
// fresh start.
#include <filesystem>
#include <fstream>
#include <string>

#include "distflow/cc/training/saver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

class CheckpointStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/checkpoint_state_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void WriteState(const std::string& text) {
    std::ofstream(dir_ + "/checkpoint", std::ios::trunc) << text;
  }
  void ExpectDamaged(const std::string& why) {
    absl::StatusOr<std::string> latest = Saver::LatestCheckpoint(dir_);
    EXPECT_EQ(latest.status().code(), absl::StatusCode::kDataLoss) << latest.status();
    EXPECT_THAT(latest.status().message(),
                HasSubstr("checkpoint state file " + dir_ + "/checkpoint is damaged: "));
    EXPECT_THAT(latest.status().message(), HasSubstr(why));
  }

  std::string dir_;
};

TEST_F(CheckpointStateTest, MissingFileMeansNoCheckpoint) {
  EXPECT_EQ(Saver::LatestCheckpoint(dir_).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CheckpointStateTest, WellFormedFileNamesTheNewest) {
  WriteState("model_checkpoint_path: \"" + dir_ + "/model.ckpt-20\"\n" +
             "all_model_checkpoint_paths: \"" + dir_ + "/model.ckpt-10\"\n" +
             "all_model_checkpoint_paths: \"" + dir_ + "/model.ckpt-20\"\n");
  absl::StatusOr<std::string> latest = Saver::LatestCheckpoint(dir_);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, dir_ + "/model.ckpt-20");
}

TEST_F(CheckpointStateTest, DamagedFilesAreDataLoss) {
  WriteState("");
  ExpectDamaged("it lists no checkpoint");
  WriteState("\xff\xfe garbage \x01\n");
  ExpectDamaged("line 1 is neither model_checkpoint_path nor all_model_checkpoint_paths");
  WriteState("all_model_checkpoint_paths: " + dir_ + "/model.ckpt-10\n");
  ExpectDamaged("line 1 does not hold a quoted path");
  WriteState("all_model_checkpoint_paths: \"/etc/model.ckpt-10\"\n");
  ExpectDamaged("names '/etc/model.ckpt-10', which is not a checkpoint");
  WriteState("all_model_checkpoint_paths: \"" + dir_ + "/../x/model.ckpt-10\"\n");
  ExpectDamaged("which is not a checkpoint");
  WriteState("all_model_checkpoint_paths: \"" + dir_ + "/passwd\"\n");
  ExpectDamaged("which is not a checkpoint");
  WriteState("all_model_checkpoint_paths: \"" + dir_ + "/model.ckpt--3\"\n");
  ExpectDamaged("which is not a checkpoint");
  WriteState("model_checkpoint_path: \"" + dir_ + "/model.ckpt-30\"\n" +
             "all_model_checkpoint_paths: \"" + dir_ + "/model.ckpt-10\"\n");
  ExpectDamaged("is not the last of all_model_checkpoint_paths");
}

}  // namespace
}  // namespace distflow
