// SavedModel directories: numbered versions (the highest is loaded from a
// base directory; names that are not numbers, or versions without a model,
// are passed over) and the legacy "saved_model_assets" collection whose
// assets are fed to the init op as TensorFlow 1.x exports expect.
#include "distflow/saved_model/version_dirs.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/env.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/saved_model.pb.h"
#include "distflow/saved_model/loader.h"
#include "gmock/gmock.h"
#include "google/protobuf/any.pb.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kModels = absl::StrCat(DISTFLOW_SOURCE_DIR, "/../shared/saved_models");

std::vector<int64_t> Versions(const std::vector<SavedModelVersion>& v) {
  std::vector<int64_t> out;
  for (const auto& x : v) out.push_back(x.version);
  return out;
}

TEST(VersionDirsTest, TheHighestNumberedVersionLoadsFromABaseDirectory) {
  const std::string base = kModels + "/serving_half_plus_two_2_versions";
  auto versions = ListSavedModelVersions(base);
  ASSERT_TRUE(versions.ok()) << versions.status();
  EXPECT_THAT(Versions(*versions), ElementsAre(123, 124));
  auto dir = ResolveSavedModelDir(base);
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_EQ(*dir, base + "/00000124");
  EXPECT_EQ(*ResolveSavedModelDir(base + "/00000123"), base + "/00000123");

  SavedModelBundle b;
  absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(), base, {"serve"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(b.export_dir, base + "/00000124");
  std::vector<Tensor> out;
  s = b.session->Run({{"x:0", Tensor::FromVector<float>({4})}}, {"y:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<float>()[0], 4.0f);  // 0.5 * 4 + 2
}

TEST(VersionDirsTest, OnlyNumberedDirectoriesHoldingAModelCount) {
  const std::string base = ::testing::TempDir() + "/versions_" + std::to_string(getpid());
  std::filesystem::remove_all(base);
  for (const char* name :
       {"1", "9", "10", "11", "abc", "-3", "007", "7", "99999999999999999999999"}) {
    std::filesystem::create_directories(base + "/" + name);
    if (std::string(name) != "11") {
      ASSERT_TRUE(WriteStringToFileAtomic(base + "/" + name + "/saved_model.pb", "").ok());
    }
  }
  auto versions = ListSavedModelVersions(base);
  ASSERT_TRUE(versions.ok()) << versions.status();
  EXPECT_THAT(Versions(*versions), ElementsAre(1, 7, 9, 10));
  EXPECT_EQ((*versions)[1].dir, base + "/007");  // "007" sorts before "7"
  EXPECT_EQ(*ResolveSavedModelDir(base), base + "/10");

  std::filesystem::create_directories(base + "/empty");
  auto none = ResolveSavedModelDir(base + "/empty");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(none.status().message()), HasSubstr(base + "/empty"));
  EXPECT_EQ(ListSavedModelVersions(base + "/missing").status().code(), absl::StatusCode::kNotFound);
  std::filesystem::remove_all(base);
}

// A TF1-style SavedModel whose init op copies the asset tensor's value into
// a string variable, with its asset listed only in the legacy collection.
SavedModel LegacyAssetModel(const std::string& filename, const std::string& any_bytes = "") {
  SavedModel model;
  MetaGraphDef* m = model.add_meta_graphs();
  m->mutable_meta_info_def()->add_tags("serve");
  GraphDef* g = m->mutable_graph_def();
  NodeDef* var = g->add_node();
  var->set_name("path");
  var->set_op("VariableV2");
  AddNodeAttr("dtype", DT_STRING, var);
  AddNodeAttr("shape", TensorShape(), var);
  NodeDef* asset = g->add_node();
  asset->set_name("asset_path");
  asset->set_op("Const");
  AddNodeAttr("dtype", DT_STRING, asset);
  AddNodeAttr("value", Tensor::Scalar<std::string>("/where/it/was/written/vocab.txt"), asset);
  NodeDef* init = g->add_node();
  init->set_name("init");
  init->set_op("Assign");
  init->add_input("path");
  init->add_input("asset_path");
  AddNodeAttr("T", DT_STRING, init);
  (*m->mutable_collection_def())["saved_model_main_op"].mutable_node_list()->add_value("init");
  AssetFileDef def;
  def.mutable_tensor_info()->set_name("asset_path:0");
  def.set_filename(filename);
  google::protobuf::Any any;
  any.set_type_url("type.googleapis.com/tensorflow.AssetFileDef");
  any.set_value(def.SerializeAsString());
  (*m->mutable_collection_def())["saved_model_assets"].mutable_any_list()->add_value(
      any_bytes.empty() ? any.SerializeAsString() : any_bytes);
  return model;
}

absl::Status WriteModel(const std::string& dir, const SavedModel& model) {
  std::filesystem::create_directories(dir + "/assets");
  return WriteStringToFileAtomic(dir + "/saved_model.pb", model.SerializeAsString());
}

TEST(LegacyAssetsTest, TheInitOpIsFedTheAssetsPathUnderTheExport) {
  const std::string dir = ::testing::TempDir() + "/legacy_assets_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WriteModel(dir, LegacyAssetModel("vocab.txt")).ok());
  SavedModelBundle b;
  absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = b.session->Run({}, {"path"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<std::string>(), dir + "/assets/vocab.txt");

  ASSERT_TRUE(WriteModel(dir, LegacyAssetModel("../../etc/passwd")).ok());
  s = LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'../../etc/passwd' is not a plain name"));

  ASSERT_TRUE(WriteModel(dir, LegacyAssetModel("vocab.txt", "\x0a\x05hello")).ok());
  s = LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("not an AssetFileDef"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distflow
