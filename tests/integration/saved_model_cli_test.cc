// Runs `distflow saved-model show|run` and `distflow graph show` as a user
// would, on the SavedModels and GraphDefs TensorFlow wrote (../shared): tag
// sets, signature keys, a signature's inputs and outputs as
// saved_model_cli prints them, the ops a model uses; signatures run on JSON,
// base64 tf.Example and .npy inputs, output as text, JSON and .npy files;
// and errors that name what was wrong.
#include <filesystem>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "command_line.h"
#include "distflow/core/env.h"
#include "distflow/example.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace distflow {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kModels = absl::StrCat(DISTFLOW_SOURCE_DIR, "/../shared/saved_models");
const std::string kHalfPlusTwo = kModels + "/serving_half_plus_two_cpu/00000123";

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class SavedModelCliTest : public ::testing::Test {
 protected:
  SavedModelCliTest() {
    dir_ = fs::path(::testing::TempDir()) /
           ("saved_model_cli_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~SavedModelCliTest() override { fs::remove_all(dir_); }

  // Runs `distflow <args>` (args quoted for /bin/sh by the caller).
  Result Run(const std::string& args) {
    const std::string err_path = (dir_ / "stderr").string();
    test::CommandOutput o =
        test::RunCommandLine(absl::StrCat(DISTFLOW_BINARY, " ", args, " 2>", err_path));
    return Result{o.exit_code, o.out, ReadFileToString(err_path).value_or("")};
  }

  fs::path dir_;
};

TEST_F(SavedModelCliTest, ShowsTagSetsSignaturesAndTensors) {
  Result tags = Run("saved-model show " + kHalfPlusTwo);
  ASSERT_EQ(tags.exit_code, 0) << tags.err;
  EXPECT_EQ(tags.out, "The given SavedModel contains the following tag-sets:\n'serve'\n");

  // A base directory of versions shows the highest; saved_model_cli's flags.
  Result keys = Run("saved-model show --dir " + kModels +
                    "/serving_half_plus_two_2_versions --tag_set serve");
  ASSERT_EQ(keys.exit_code, 0) << keys.err;
  EXPECT_THAT(keys.out, HasSubstr("SignatureDef key: \"classify_x_to_y\"\n"));
  EXPECT_THAT(keys.out, HasSubstr("SignatureDef key: \"serving_default\"\n"));

  Result sig = Run("saved-model show " + kModels +
                   "/keras_mnist_cnn_bn --tag-set serve --signature-def serving_default");
  ASSERT_EQ(sig.exit_code, 0) << sig.err;
  EXPECT_EQ(sig.out,
            "The given SavedModel SignatureDef contains the following input(s):\n"
            "  inputs['conv2d_input'] tensor_info:\n"
            "      dtype: DT_FLOAT\n"
            "      shape: (-1, 28, 28, 1)\n"
            "      name: serving_default_conv2d_input:0\n"
            "The given SavedModel SignatureDef contains the following output(s):\n"
            "  outputs['dense_1'] tensor_info:\n"
            "      dtype: DT_FLOAT\n"
            "      shape: (-1, 10)\n"
            "      name: StatefulPartitionedCall:0\n"
            "Method name is: tensorflow/serving/predict\n");

  Result all = Run("saved-model show " + kHalfPlusTwo + " --all");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("MetaGraphDef with tag-set: 'serve' contains the following "
                                 "SignatureDefs:\n\nsignature_def['classify_x_to_y']:\n"));
  EXPECT_THAT(all.out, HasSubstr("    inputs['inputs'] tensor_info:\n        dtype: DT_STRING\n"
                                 "        shape: unknown_rank\n        name: tf_example:0\n"));
  EXPECT_THAT(all.out, HasSubstr("    outputs['y'] tensor_info:\n        dtype: DT_FLOAT\n"
                                 "        shape: (-1, 1)\n        name: y:0\n"));

  Result ops = Run("saved-model show " + kModels + "/keras_heart_featurecols --ops");
  ASSERT_EQ(ops.exit_code, 0) << ops.err;
  EXPECT_THAT(ops.out, HasSubstr("HashTableV2\t14\n"));
  EXPECT_THAT(ops.out, HasSubstr("Bucketize\t7\n"));
  // Only the save path's op is missing; nothing serving reaches.
  EXPECT_THAT(ops.out, HasSubstr("StaticRegexFullMatch\t1\t(not in distflow)\n"));
  EXPECT_THAT(ops.out, HasSubstr("49 ops, 1 not in distflow\n"));
}

TEST_F(SavedModelCliTest, RunsSignaturesOnJsonExamplesAndNpyInputs) {
  Result text = Run("saved-model run " + kHalfPlusTwo + " --input 'x=[[1],[2],[5]]'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out, "y float32 [3,1] [[2.5],[3.0],[4.5]]\n");
  // float32 values print with the fewest digits that read back the same.
  Result shortest = Run("saved-model run " + kHalfPlusTwo + " --input 'x=[[0.1],[0.9]]'");
  ASSERT_EQ(shortest.exit_code, 0) << shortest.err;
  EXPECT_EQ(shortest.out, "y float32 [2,1] [[2.05],[2.45]]\n");

  // A tf.Example as TF Serving's {"b64": ...}, to the regress signature.
  Example e;
  (*e.mutable_features()->mutable_feature())["x"].mutable_float_list()->add_value(6);
  const std::string b64 = absl::Base64Escape(e.SerializeAsString());
  Result json = Run("saved-model run --dir " + kHalfPlusTwo +
                    " --signature_def regress_x_to_y2 --input 'inputs=[{\"b64\": \"" + b64 +
                    "\"}]' --output json --output-dir " + (dir_ / "out").string());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["outputs"]["dtype"], "float32");
  EXPECT_EQ(parsed["outputs"]["shape"], nlohmann::json({1, 1}));
  EXPECT_EQ(parsed["outputs"]["values"][0][0].get<double>(), 6.0);  // 0.5 * 6 + 3
  ASSERT_TRUE(fs::exists(dir_ / "out" / "outputs.npy"));

  // The written .npy goes back in through --inputs (saved_model_cli's form).
  Result npy = Run("saved-model run " + kHalfPlusTwo + " --signature_def regress_x2_to_y3 " +
                   "--inputs inputs=" + (dir_ / "out" / "outputs.npy").string());
  ASSERT_EQ(npy.exit_code, 0) << npy.err;
  EXPECT_EQ(npy.out, "outputs float32 [1,1] [[6.0]]\n");  // 0.5 * 6 + 3

  Result exprs =
      Run("saved-model run " + kModels + "/serving_half_plus_two_tf2 --input_exprs 'x=[0, 4]'");
  ASSERT_EQ(exprs.exit_code, 0) << exprs.err;
  EXPECT_EQ(exprs.out, "y float32 [2] [2.0,4.0]\n");
}

TEST_F(SavedModelCliTest, ErrorsNameWhatWasWrong) {
  Result sig = Run("saved-model run " + kHalfPlusTwo + " --signature_def nope --input 'x=[1]'");
  EXPECT_EQ(sig.exit_code, 1);
  EXPECT_THAT(sig.err, HasSubstr("error: NotFound: no signature 'nope'; the signatures are: "
                                 "classify_x_to_y, regress_x2_to_y3, regress_x_to_y, "
                                 "regress_x_to_y2, serving_default"));
  Result tags = Run("saved-model show " + kHalfPlusTwo + " --tag-set serve,gpu");
  EXPECT_EQ(tags.exit_code, 1);
  EXPECT_THAT(tags.err, HasSubstr("has no graph with tags {gpu, serve}; its tag sets: {serve}"));
  Result missing = Run("saved-model run " + kHalfPlusTwo);
  EXPECT_THAT(missing.err, HasSubstr("missing input(s) x"));
  Result unknown = Run("saved-model run " + kHalfPlusTwo + " --input 'z=[1]'");
  EXPECT_THAT(unknown.err, HasSubstr("the signature has no input 'z'; its inputs are: x"));
  Result json = Run("saved-model run " + kHalfPlusTwo + " --input 'x=[1,'");
  EXPECT_THAT(json.err, HasSubstr("input 'x': '[1,' is not valid JSON"));
  Result b64 = Run("saved-model run " + kHalfPlusTwo +
                   " --signature_def regress_x_to_y --input 'inputs=[{\"b64\": \"@@\"}]'");
  EXPECT_THAT(b64.err, HasSubstr("'@@' is not base64"));
  Result none = Run("saved-model show " + (dir_ / "nothing").string());
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("error: NotFound: no SavedModel in"));
  ASSERT_TRUE(WriteStringToFileAtomic((dir_ / "saved_model.pb").string(), "\x01garbage").ok());
  Result garbage = Run("saved-model show " + dir_.string());
  EXPECT_THAT(garbage.err, HasSubstr("saved_model.pb is not a SavedModel"));
}

TEST_F(SavedModelCliTest, GraphShowListsFeedsFetchesOpsAndDevices) {
  Result r = Run("graph show " + std::string(DISTFLOW_SOURCE_DIR) +
                 "/../shared/tf_real_graphs/go_tensorflow_graph.pb");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("go_tensorflow_graph.pb: 110 nodes, 0 functions"));
  EXPECT_THAT(r.out, HasSubstr("\nops:\n  Add 1\n"));
  EXPECT_THAT(r.out, HasSubstr("  MatMul 3\n"));
  EXPECT_THAT(r.out, HasSubstr("\ndevices:\n  (any) 107\n  /device:CPU:0 3\n"));
  EXPECT_THAT(r.out, HasSubstr("placeholders (feeds):\n  input float32 [?,1,1]\n"
                               "  target float32 [?,1,1]\n"));
  EXPECT_THAT(r.out, HasSubstr("  loss (Mean) float32\n"));
  EXPECT_THAT(r.out, HasSubstr("  init (NoOp) (no outputs)\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("not in distflow")));
  Result bad = Run("graph show " + (dir_ / "missing.pb").string());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("missing.pb"));
}

}  // namespace
}  // namespace distflow
