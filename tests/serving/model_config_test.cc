// Which versions a policy serves, version directories on disk, and TF
// Serving's text-format config files.
#include "distflow/serving/model_config.h"

#include <filesystem>
#include <fstream>

#include "distflow/serving/aspired_versions.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(AspiredVersionsTest, PoliciesPickFromWhatIsThere) {
  const std::map<int64_t, std::string> there = {{1, "a"}, {3, "b"}, {7, "c"}};
  ServableVersionPolicy p;
  EXPECT_THAT(AspiredVersions(p, there), ElementsAre(7));  // default: the newest
  p.mutable_latest()->set_num_versions(2);
  EXPECT_THAT(AspiredVersions(p, there), ElementsAre(3, 7));
  p.mutable_latest()->set_num_versions(9);
  EXPECT_THAT(AspiredVersions(p, there), ElementsAre(1, 3, 7));
  p.mutable_all();
  EXPECT_THAT(AspiredVersions(p, there), ElementsAre(1, 3, 7));
  p.mutable_specific()->add_versions(3);
  p.mutable_specific()->add_versions(4);  // not there
  EXPECT_THAT(AspiredVersions(p, there), ElementsAre(3));
  EXPECT_TRUE(AspiredVersions(ServableVersionPolicy(), {}).empty());
}

TEST(AspiredVersionsTest, VersionDirectoriesAreTheAllDigitOnes) {
  const std::string base = ::testing::TempDir() + "/version_dirs";
  std::filesystem::remove_all(base);
  for (const char* d : {"1", "00000123", "2.tmp", "abc", "99999999999999999999"}) {
    std::filesystem::create_directories(base + "/" + d);
  }
  std::ofstream(base + "/5") << "a file, not a version";
  auto versions = ListVersionDirs(base);
  ASSERT_TRUE(versions.ok()) << versions.status();
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ(versions->at(1), base + "/1");
  EXPECT_EQ(versions->at(123), base + "/00000123");
  EXPECT_EQ(ListVersionDirs(base + "/nope").status().code(), absl::StatusCode::kNotFound);
  std::filesystem::remove_all(base);
}

TEST(ModelConfigTest, TensorFlowServingsTextFormat) {
  auto config = ParseModelServerConfig(R"(
      model_config_list {
        config { name: "a" base_path: "/m/a" model_platform: "tensorflow"
                 model_version_policy { specific { versions: 1 versions: 2 } }
                 version_labels { key: "stable" value: 1 } }
        config { name: "b" base_path: "/m/b" }
      })",
                                       "models.config");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->model_config_list().config_size(), 2);
  const ModelConfig& a = config->model_config_list().config(0);
  EXPECT_THAT(a.model_version_policy().specific().versions(), ElementsAre(1, 2));
  EXPECT_EQ(a.version_labels().at("stable"), 1);

  absl::Status s =
      ParseModelServerConfig("model_config_list { config { nme: \"a\" } }", "models.config")
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("models.config"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("line 1, column"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("nme"));
}

TEST(ModelConfigTest, BatchingParameters) {
  auto b = ParseBatchingParameters(
      "max_batch_size { value: 128 } batch_timeout_micros { value: 0 }"
      " num_batch_threads { value: 4 } max_enqueued_batches { value: 7 }",
      "batching.config");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->max_batch_size, 128);
  EXPECT_EQ(b->batch_timeout_micros, 0);
  EXPECT_EQ(b->num_batch_threads, 4);
  EXPECT_EQ(b->max_enqueued_batches, 7);
  auto defaults = ParseBatchingParameters("", "empty");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->max_batch_size, BatchingOptions().max_batch_size);
  EXPECT_THAT(
      std::string(
          ParseBatchingParameters("batch_timeout_micros { value: -1 }", "f").status().message()),
      HasSubstr("f: batch_timeout_micros must not be negative, got -1"));
}

}  // namespace
}  // namespace distflow
