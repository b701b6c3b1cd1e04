// LoadSavedModel on SavedModels TensorFlow wrote, in ../shared/saved_models:
// the TF1 counter model's variable restored from its checkpoint and its
// signatures run on one loaded model; TF2's half_plus_two serving its
// formula; the TF 0.12 session bundle legacy_half_plus_two loaded as a
// SavedModel (signatures converted, variables from its "export"
// checkpoint); a missing model, a tag set it lacks, a file that is not a
// SavedModel, a damaged checkpoint and damaged bundles, each an error
// naming what was wrong.
#include "distflow/saved_model/loader.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/env.h"
#include "distflow/framework/tensor_bundle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

const std::string kModels = absl::StrCat(DISTFLOW_SOURCE_DIR, "/../shared/saved_models");

// Runs signature `name` of the bundle with `inputs` (input key -> value) and
// returns its output `key`.
absl::StatusOr<float> RunSignature(const SavedModelBundle& b, const std::string& name,
                                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                                   const std::string& key) {
  auto sig = b.meta_graph_def.signature_def().find(name);
  if (sig == b.meta_graph_def.signature_def().end()) return absl::NotFoundError(name);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [k, v] : inputs) feeds.emplace_back(sig->second.inputs().at(k).name(), v);
  std::vector<Tensor> out;
  absl::Status s = b.session->Run(feeds, {sig->second.outputs().at(key).name()}, {}, &out);
  if (!s.ok()) return s;
  return out[0].scalar<float>();
}

// A copy of `from` in a fresh writable scratch directory named `name`.
std::string WritableCopy(const std::string& from, const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::copy(from, dir, std::filesystem::copy_options::recursive);
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    std::filesystem::permissions(e.path(), std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::add);
  }
  return dir;
}

TEST(LoadSavedModelTest, CounterRestoresItsVariableAndKeepsStateAcrossCalls) {
  SavedModelBundle b;
  absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(),
                                  kModels + "/serving_counter/00000123", {"serve"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(*RunSignature(b, "get_counter", {}, "output"), 0.0f);
  EXPECT_EQ(*RunSignature(b, "incr_counter", {}, "output"), 1.0f);
  EXPECT_EQ(*RunSignature(b, "incr_counter", {}, "output"), 2.0f);
  EXPECT_EQ(*RunSignature(b, "incr_counter_by", {{"delta", Tensor::Scalar<float>(3)}}, "output"),
            5.0f);
  EXPECT_EQ(*RunSignature(b, "get_counter", {}, "output"), 5.0f);
  EXPECT_EQ(*RunSignature(b, "reset_counter", {}, "output"), 0.0f);
  EXPECT_EQ(*RunSignature(b, "get_counter", {}, "output"), 0.0f);
}

TEST(LoadSavedModelTest, VariablesComeFromTheCheckpoint) {
  // The counter model with its checkpoint rewritten to hold 7 (TensorFlow's
  // holds the initial value, 0).
  const std::string dir = WritableCopy(kModels + "/serving_counter/00000123", "counter_at_7");
  {
    BundleWriter w(dir + "/variables/variables");
    ASSERT_TRUE(w.Add("counter", Tensor::Scalar<float>(7)).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  SavedModelBundle b;
  absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(*RunSignature(b, "get_counter", {}, "output"), 7.0f);
  EXPECT_EQ(*RunSignature(b, "incr_counter", {}, "output"), 8.0f);

  // A damaged checkpoint fails the load, naming the model.
  std::filesystem::resize_file(dir + "/variables/variables.data-00000-of-00001", 2);
  s = LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("loading SavedModel '" + dir));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'counter'"));
  std::filesystem::remove_all(dir);
}

TEST(LoadSavedModelTest, Tf2HalfPlusTwoServesItsFormula) {
  // Written by TensorFlow 2.14: the signature calls a function of the
  // graph's library (StatefulPartitionedCall) and the variables restore
  // from object-based checkpoint keys through the saver's restore function.
  SavedModelBundle b;
  absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(),
                                  kModels + "/serving_half_plus_two_tf2/00000123", {"serve"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  const SignatureDef& sig = b.meta_graph_def.signature_def().at("serving_default");
  std::vector<Tensor> out;
  s = b.session->Run({{sig.inputs().at("x").name(), Tensor::FromVector<float>({1, 2, 5})}},
                     {sig.outputs().at("y").name()}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(out[0].flat<float>(), ::testing::ElementsAre(2.5f, 3.0f, 4.5f));  // 0.5 x + 2
}

TEST(LoadSavedModelTest, SessionBundleLoadsWithConvertedSignatures) {
  // The base directory: its version 00000123 holds export.meta and the
  // "export" checkpoint, no saved_model.pb.
  SavedModelBundle b;
  absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(), kModels + "/legacy_half_plus_two",
                                  {"serve"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(b.export_dir, kModels + "/legacy_half_plus_two/00000123");
  const auto& sigs = b.meta_graph_def.signature_def();
  ASSERT_EQ(sigs.size(), 2u);
  // The generic "inputs"/"outputs" signatures: a predict signature.
  const SignatureDef& predict = sigs.at("serving_default");
  EXPECT_EQ(predict.method_name(), "tensorflow/serving/predict");
  EXPECT_EQ(predict.inputs().at("x").name(), "Placeholder:0");
  EXPECT_EQ(predict.inputs().at("x").dtype(), DT_FLOAT);
  EXPECT_EQ(predict.outputs().at("y").name(), "Add:0");
  const SignatureDef& regress = sigs.at("regress");
  EXPECT_EQ(regress.method_name(), "tensorflow/serving/regress");
  EXPECT_EQ(regress.inputs().at("inputs").name(), "Placeholder:0");
  EXPECT_EQ(regress.outputs().at("outputs").name(), "Add:0");
  std::vector<Tensor> out;
  s = b.session->Run({{"Placeholder:0", Tensor::FromVector<float>({1, 2, 5})}}, {"Add:0"}, {},
                     &out);
  ASSERT_TRUE(s.ok()) << s;
  // 0.5 x + 2, with 0.5 and 2 restored from the checkpoint (the graph's
  // initial values are the same, but the init op is never run).
  EXPECT_THAT(out[0].flat<float>(), ::testing::ElementsAre(2.5f, 3.0f, 4.5f));
  EXPECT_EQ(*RunSignature(b, "regress", {{"inputs", Tensor::Scalar<float>(10)}}, "outputs"), 7.0f);
}

TEST(LoadSavedModelTest, DamagedSessionBundlesAreErrorsNamingTheFile) {
  const std::string dir =
      WritableCopy(kModels + "/legacy_half_plus_two/00000123", "damaged_bundle");
  SavedModelBundle b;
  // Its checkpoint as TensorFlow's old sharded V1 saver named it.
  std::filesystem::rename(dir + "/export.index", dir + "/export-00000-of-00001");
  absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("V1"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(dir));
  // No checkpoint at all.
  std::filesystem::remove(dir + "/export-00000-of-00001");
  s = LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("export.index"));
  // export.meta that is not a MetaGraphDef.
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/export.meta", "\xff\xff garbage").ok());
  s = LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(dir + "/export.meta"));
  std::filesystem::remove_all(dir);
}

TEST(LoadSavedModelTest, ErrorsNameTheModelAndWhatIsMissing) {
  SavedModelBundle b;
  absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(), kModels + "/nope", {"serve"}, &b);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(kModels + "/nope"));

  s = LoadSavedModel(SessionOptions(), RunOptions(), kModels + "/serving_counter/00000123",
                     {"serve", "gpu"}, &b);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("no graph with tags {gpu, serve}"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("its tag sets: {serve}"));

  const std::string dir = ::testing::TempDir() + "/not_a_saved_model_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/saved_model.pb", "\xff\xff garbage").ok());
  s = LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(dir + "/saved_model.pb is not a SavedModel"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distflow
