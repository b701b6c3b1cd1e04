// The "checkpoint" state file Saver keeps: a missing one means the newest
// complete checkpoint on disk, or none when there is none; only incomplete
// ones on disk, or a damaged file, are DataLoss naming them, never a silent
// fresh start that would save over them.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "distflow/training/saver.h"
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

  // Touches the data and index files of `shards` of "model.ckpt-<step>"
  // written in `of` shards.
  void WriteShards(int step, std::vector<int> shards, int of) {
    for (int i : shards) {
      const std::string shard = dir_ + "/model.ckpt-" + std::to_string(step) + ".shard-" +
                                std::to_string(i) + "-of-" + std::to_string(of);
      std::ofstream(shard + ".data-00000-of-00001") << "d";
      std::ofstream(shard + ".index") << "i";
    }
  }
  // Whether every shard of some count n <= 64 of `prefix` has both files.
  static bool IsComplete(const std::string& prefix) {
    for (int n = 1; n <= 64; ++n) {
      bool all = true;
      for (int i = 0; all && i < n; ++i) {
        const std::string shard =
            prefix + ".shard-" + std::to_string(i) + "-of-" + std::to_string(n);
        all = std::filesystem::exists(shard + ".index") &&
              std::filesystem::exists(shard + ".data-00000-of-00001");
      }
      if (all) return true;
    }
    return false;
  }
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

TEST_F(CheckpointStateTest, MissingFileMeansTheNewestCompleteCheckpointOnDisk) {
  WriteShards(10, {0, 1}, 2);
  WriteShards(200, {0, 1}, 2);
  WriteShards(30, {0, 1}, 2);
  // Newer but incomplete: a shard's index, or a whole shard, missing.
  WriteShards(300, {0, 1}, 2);
  std::filesystem::remove(dir_ + "/model.ckpt-300.shard-1-of-2.index");
  WriteShards(400, {0}, 2);
  std::ofstream(dir_ + "/model.ckpt-500.shard-0-of-1.index.tmp123") << "t";
  std::ofstream(dir_ + "/model.ckpt-600.shard-0-of-999999999.index") << "i";
  std::ofstream(dir_ + "/unrelated.index") << "u";
  absl::StatusOr<std::string> latest = Saver::LatestCheckpoint(dir_);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, dir_ + "/model.ckpt-200");
}

TEST_F(CheckpointStateTest, MissingFileWithOnlyIncompleteCheckpointsIsRefusedNamingThem) {
  WriteShards(10, {1}, 2);
  WriteShards(20, {0}, 1);
  std::filesystem::remove(dir_ + "/model.ckpt-20.shard-0-of-1.data-00000-of-00001");
  absl::StatusOr<std::string> latest = Saver::LatestCheckpoint(dir_);
  EXPECT_EQ(latest.status().code(), absl::StatusCode::kDataLoss) << latest.status();
  EXPECT_THAT(latest.status().message(),
              HasSubstr("only incomplete checkpoints (an index or data file missing): " +
                        dir_ + "/model.ckpt-10, " + dir_ + "/model.ckpt-20"));
}

// TensorFlow's layout, which Save writes: "<prefix>.index" (written last)
// and "<prefix>.data-<k>-of-<n>" for every k.
TEST_F(CheckpointStateTest, MissingFileFindsCheckpointsInTensorFlowsLayout) {
  auto write = [this](int step, std::vector<int> data, int of, bool index) {
    const std::string prefix = dir_ + "/model.ckpt-" + std::to_string(step);
    for (int k : data) {
      char name[64];
      std::snprintf(name, sizeof(name), ".data-%05d-of-%05d", k, of);
      std::ofstream(prefix + name) << "d";
    }
    if (index) std::ofstream(prefix + ".index") << "i";
  };
  write(10, {0}, 1, true);
  write(20, {0, 1}, 2, true);
  write(30, {0, 1}, 2, false);  // the merge never wrote its index
  write(40, {1}, 2, true);      // a data file lost
  absl::StatusOr<std::string> latest = Saver::LatestCheckpoint(dir_);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, dir_ + "/model.ckpt-20");

  std::filesystem::remove(dir_ + "/model.ckpt-10.index");
  std::filesystem::remove(dir_ + "/model.ckpt-20.data-00000-of-00002");
  latest = Saver::LatestCheckpoint(dir_);
  EXPECT_EQ(latest.status().code(), absl::StatusCode::kDataLoss) << latest.status();
  EXPECT_THAT(latest.status().message(),
              HasSubstr(dir_ + "/model.ckpt-10, " + dir_ + "/model.ckpt-20, " + dir_ +
                        "/model.ckpt-30, " + dir_ + "/model.ckpt-40"));
}

// Seeded mutations of checkpoint file names (digits, dots, dashes and
// shard counts changed, cut or repeated) beside one complete checkpoint:
// without a state file, the newest complete checkpoint is always the one
// named, whatever else the directory holds.
TEST_F(CheckpointStateTest, MutatedFileNamesNeverHideOrFakeACheckpoint) {
  const std::vector<std::string> seeds = {"model.ckpt-5.shard-0-of-1.index",
                                          "model.ckpt-5.shard-0-of-1.data-00000-of-00001",
                                          "model.ckpt-12.shard-1-of-3.index"};
  const std::string alphabet = "0123456789.-_abcdefghijklmnopqrstuvwxyz";
  std::mt19937 rng(28);
  for (int round = 0; round < 200; ++round) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    WriteShards(7, {0, 1}, 2);  // the one complete checkpoint
    for (int f = 0; f < 8; ++f) {
      std::string name = seeds[rng() % seeds.size()];
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        const size_t at = rng() % name.size();
        switch (rng() % 3) {
          case 0:
            name[at] = alphabet[rng() % alphabet.size()];
            break;
          case 1:
            name.erase(at, 1 + rng() % 3);
            break;
          default:
            name.insert(at, name.substr(at, 1 + rng() % 4));
        }
        if (name.empty()) name.push_back('x');
      }
      if (name.find('/') != std::string::npos || name == "." || name == ".." ||
          name == "checkpoint") {
        continue;
      }
      std::ofstream(dir_ + "/" + name) << "m";
    }
    // A mutated name may complete a checkpoint newer than 7 (both files of
    // every shard of it present); only then may another one be named.
    absl::StatusOr<std::string> latest = Saver::LatestCheckpoint(dir_);
    ASSERT_TRUE(latest.ok()) << round << ": " << latest.status();
    const int64_t step = Saver::StepOfCheckpoint(*latest);
    ASSERT_GE(step, 7) << round << ": " << *latest;
    if (step != 7) {
      EXPECT_TRUE(IsComplete(*latest)) << round << ": " << *latest;
    }
  }
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
