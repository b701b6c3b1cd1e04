// Every signature of every SavedModel in ../shared/saved_models (the TF 0.12
// session bundle legacy_half_plus_two included) runs on one
// loaded model with inputs made from its TensorInfo: numbers zero-filled
// (unknown dimensions 1), string inputs one serialized tf.Example with the
// float features x and x2 (what the half_plus_two family's classify and
// regress signatures parse; a batch of one when the rank is unknown).
// Reference outputs (the counter's) are declared as ref dtypes. Each output must come back with the
// dtype the signature declares. One signature is left out, with its reason.
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/example.pb.h"
#include "distflow/saved_model/loader.h"
#include "distflow/saved_model/version_dirs.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

const std::string kModels = absl::StrCat(DISTFLOW_SOURCE_DIR, "/../shared/saved_models");

// Signatures that cannot run on inputs made from their TensorInfo, and why
// (example_signatures_test.cc runs them on what they really take).
const std::map<std::string, std::string> kSkipped = {
    {"serving_half_plus_three/tensorflow/serving/regress",
     "its input is declared float, but the placeholder behind it is a string of serialized "
     "tf.Examples"},
};

// Signatures that run, over the thirteen models (the init ops not counted).
constexpr int kSignatures = 40;

Tensor InputFor(const TensorInfo& info) {
  std::vector<int64_t> dims;
  for (const auto& d : info.tensor_shape().dim()) dims.push_back(d.size() < 0 ? 1 : d.size());
  // Unknown rank: a batch of one record for string inputs, a scalar otherwise.
  if (info.tensor_shape().unknown_rank() && info.dtype() == DT_STRING) dims = {1};
  Tensor t(info.dtype(), TensorShape(dims));
  if (info.dtype() == DT_STRING) {
    Example e;
    for (const char* key : {"x", "x2"}) {
      (*e.mutable_features()->mutable_feature())[key].mutable_float_list()->add_value(1);
    }
    for (std::string& s : t.flat<std::string>()) s = e.SerializeAsString();
  } else if (t.TotalBytes() > 0) {
    std::memset(t.raw_data(), 0, t.TotalBytes());
  }
  return t;
}

TEST(EverySignatureTest, RunsOnEveryModel) {
  int models = 0, signatures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kModels)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory()) continue;
    auto versions = ListSavedModelVersions(entry.path().string());
    ASSERT_TRUE(versions.ok()) << versions.status();
    std::vector<std::string> dirs;
    for (const auto& v : *versions) dirs.push_back(v.dir);
    if (dirs.empty()) dirs.push_back(entry.path().string());
    for (const std::string& dir : dirs) {
      SavedModelBundle b;
      absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b);
      ASSERT_TRUE(s.ok()) << s;
      ++models;
      for (const auto& [key, sig] : b.meta_graph_def.signature_def()) {
        if (key == "__saved_model_init_op" || kSkipped.contains(name + "/" + key)) continue;
        std::vector<std::pair<std::string, Tensor>> feeds;
        for (const auto& [k, info] : sig.inputs()) feeds.emplace_back(info.name(), InputFor(info));
        std::vector<std::string> fetches;
        std::vector<DataType> dtypes;
        for (const auto& [k, info] : sig.outputs()) {
          fetches.push_back(info.name());
          dtypes.push_back(info.dtype());
        }
        std::vector<Tensor> out;
        s = b.session->Run(feeds, fetches, {}, &out);
        EXPECT_TRUE(s.ok()) << dir << " " << key << ": " << s;
        for (size_t i = 0; s.ok() && i < out.size(); ++i) {
          EXPECT_EQ(out[i].dtype(), BaseType(dtypes[i])) << dir << " " << key << " " << fetches[i];
        }
        ++signatures;
      }
    }
  }
  EXPECT_EQ(models, 13);
  EXPECT_EQ(signatures, kSignatures);
}

}  // namespace
}  // namespace distflow
