// LoadSavedModel on SavedModels TensorFlow wrote, in ../shared/saved_models:
// the TF1 counter model's variable restored from its checkpoint and its
// signatures run on one loaded model; TF2's half_plus_two serving its
// formula; a missing model, a tag set it lacks, a file that is not a
// SavedModel and a damaged checkpoint, each an error naming what was wrong.
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
  const std::string dir = ::testing::TempDir() + "/counter_at_7_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::copy(kModels + "/serving_counter/00000123", dir,
                        std::filesystem::copy_options::recursive);
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    std::filesystem::permissions(e.path(), std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::add);
  }
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
