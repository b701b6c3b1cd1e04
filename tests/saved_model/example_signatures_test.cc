// The classify and regress signatures of TensorFlow Serving's half_plus_two
// family, which take serialized tf.Example records (ParseExample in the TF1
// exports, ParseExampleV2 inside functions in the TF2 one), loaded with
// LoadSavedModel and run end to end: y = 0.5 x + 2 and y2 = 0.5 x + 3. An
// example without x is an error naming x. Left out: the MKL export's y2,
// which adds a convolution's [1,10,10,1] output (it broadcasts only for a
// batch of one, in TensorFlow too). half_plus_three's regress signature,
// whose tf_example placeholder is declared a scalar while ParseExample takes
// a vector, runs on a batch as in TensorFlow: a loaded model's session does
// not hold feeds to the placeholder's shape.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/example.pb.h"
#include "distflow/saved_model/loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kModels = absl::StrCat(DISTFLOW_SOURCE_DIR, "/../shared/saved_models");

// A batch of tf.Example records, each with one float feature `key`.
Tensor Examples(const std::string& key, const std::vector<float>& values) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    Example e;
    (*e.mutable_features()->mutable_feature())[key].mutable_float_list()->add_value(values[i]);
    t.flat<std::string>()[i] = e.SerializeAsString();
  }
  return t;
}

// Runs signature `name`, feeding `input` to its input "inputs" and fetching
// output `key`.
absl::StatusOr<Tensor> RunSignature(const SavedModelBundle& b, const std::string& name,
                                    const Tensor& input, const std::string& key) {
  auto sig = b.meta_graph_def.signature_def().find(name);
  if (sig == b.meta_graph_def.signature_def().end()) {
    return absl::NotFoundError(absl::StrCat("no signature ", name));
  }
  std::vector<Tensor> out;
  absl::Status s = b.session->Run({{sig->second.inputs().at("inputs").name(), input}},
                                  {sig->second.outputs().at(key).name()}, {}, &out);
  if (!s.ok()) return s;
  return out[0];
}

struct Case {
  std::string model;      // under kModels
  std::string signature;  // its key
  std::string output;     // output key
  float offset;           // y = 0.5 x + offset
};

class ExampleSignatureTest : public ::testing::TestWithParam<Case> {};

TEST_P(ExampleSignatureTest, ComputesItsFormulaOnFedExamples) {
  const Case& c = GetParam();
  SavedModelBundle b;
  absl::Status s =
      LoadSavedModel(SessionOptions(), RunOptions(), kModels + "/" + c.model, {"serve"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  auto out = RunSignature(b, c.signature, Examples("x", {1, 2, 5}), c.output);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->dtype(), DT_FLOAT);
  EXPECT_EQ(out->shape(), TensorShape({3, 1}));
  EXPECT_THAT(out->flat<float>(), ElementsAre(0.5f + c.offset, 1.0f + c.offset, 2.5f + c.offset));

  // x has no default in any of them: an example without it fails the run.
  auto missing = RunSignature(b, c.signature, Examples("z", {1}), c.output);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument) << missing.status();
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("feature 'x': is required (it has no default)"));
}

std::vector<Case> HalfPlusTwoCases() {
  std::vector<Case> cases;
  for (const char* model :
       {"serving_half_plus_two_cpu/00000123", "serving_half_plus_two_mkl/00000123",
        "serving_half_plus_two_2_versions/00000123", "serving_half_plus_two_2_versions/00000124",
        "serving_half_plus_two_tf2/00000123"}) {
    cases.push_back({model, "classify_x_to_y", "scores", 2});
    cases.push_back({model, "regress_x_to_y", "outputs", 2});
    if (std::string(model).find("mkl") == std::string::npos) {
      cases.push_back({model, "regress_x_to_y2", "outputs", 3});
    }
  }
  cases.push_back({"serving_half_plus_three/00000123", "tensorflow/serving/regress", "outputs", 3});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(HalfPlusTwoFamily, ExampleSignatureTest,
                         ::testing::ValuesIn(HalfPlusTwoCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name =
                               absl::StrCat(info.param.model, "_", info.param.signature);
                           for (char& ch : name) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

TEST(ExampleSignatureTest, X2FallsBackToItsDefaultWhenFedThroughTheGraph) {
  // In the TF1 exports x2 is ParseExample's second dense output (default 0);
  // regress_x2_to_y3 feeds it directly: y3 = 0.5 x2 + 3.
  SavedModelBundle b;
  absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(),
                                  kModels + "/serving_half_plus_two_cpu/00000123", {"serve"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  const SignatureDef& sig = b.meta_graph_def.signature_def().at("regress_x2_to_y3");
  std::vector<Tensor> out;
  s = b.session->Run({{sig.inputs().at("inputs").name(),
                       Tensor::FromVector<float>(std::vector<float>{4, 6}, TensorShape({2, 1}))}},
                     {sig.outputs().at("outputs").name()}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(out[0].flat<float>(), ElementsAre(5.0f, 6.0f));
  // Fed only examples, x2 takes its default 0: y3 = 3.
  s = b.session->Run({{"tf_example:0", Examples("x", {1, 2})}}, {"y3:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(out[0].flat<float>(), ElementsAre(3.0f, 3.0f));
}

}  // namespace
}  // namespace distflow
