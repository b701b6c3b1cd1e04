// SaveSavedModel: a small graph with a resource variable and a reference
// variable, exported, read back by LoadSavedModel (the restore op puts the
// saved values in place) and by the checkpoint reader (TensorFlow's keys),
// its saver's save op writing a checkpoint the reader takes; an existing
// directory, a missing or mistyped variable are errors naming them.
#include "distflow/saved_model/writer.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/framework/attr_value_util.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/saved_model/loader.h"
#include "distflow/saved_model/reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

NodeDef* Add(GraphDef* g, const std::string& name, const std::string& op,
             std::vector<std::string> inputs) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (auto& i : inputs) n->add_input(i);
  return n;
}

// y = x * w + b, w a resource variable of [2], b a reference variable.
SavedModelExport AffineModel(Tensor w, Tensor b) {
  SavedModelExport m;
  GraphDef& g = m.graph;
  NodeDef* x = Add(&g, "x", "Placeholder", {});
  AddNodeAttr("dtype", DT_FLOAT, x);
  AddNodeAttr("shape", PartialTensorShape({-1, 2}), x);
  NodeDef* wv = Add(&g, "layer/w", "VarHandleOp", {});
  AddNodeAttr("dtype", DT_FLOAT, wv);
  AddNodeAttr("shape", PartialTensorShape({2}), wv);
  NodeDef* read = Add(&g, "layer/w/read", "ReadVariableOp", {"layer/w"});
  AddNodeAttr("dtype", DT_FLOAT, read);
  NodeDef* bv = Add(&g, "layer/b", "VariableV2", {});
  AddNodeAttr("dtype", DT_FLOAT, bv);
  AddNodeAttr("shape", TensorShape(), bv);
  NodeDef* mul = Add(&g, "mul", "Mul", {"x", "layer/w/read"});
  AddNodeAttr("T", DT_FLOAT, mul);
  NodeDef* y = Add(&g, "y", "AddV2", {"mul", "layer/b"});
  AddNodeAttr("T", DT_FLOAT, y);
  m.variables = {
      {"layer/w", std::move(w), "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"},
      {"layer/b", std::move(b), ""}};
  SignatureDef sig;
  sig.set_method_name("tensorflow/serving/predict");
  (*sig.mutable_inputs())["x"].set_name("x:0");
  (*sig.mutable_inputs())["x"].set_dtype(DT_FLOAT);
  (*sig.mutable_outputs())["y"].set_name("y:0");
  (*sig.mutable_outputs())["y"].set_dtype(DT_FLOAT);
  m.signatures["serving_default"] = sig;
  return m;
}

class WriterTest : public ::testing::Test {
 protected:
  // One directory per test: ctest runs the tests of this file at once.
  WriterTest()
      : base_(::testing::TempDir() + "/writer_test_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name()) {
    std::filesystem::remove_all(base_);
  }
  ~WriterTest() override { std::filesystem::remove_all(base_); }
  std::string base_;
};

TEST_F(WriterTest, ExportedModelLoadsWithItsValues) {
  const std::string dir = base_ + "/model/7";
  absl::Status s =
      SaveSavedModel(AffineModel(Tensor::FromVector<float>({2, 3}), Tensor::Scalar<float>(1)), dir);
  ASSERT_TRUE(s.ok()) << s;
  // Only the finished version is in the base directory.
  std::vector<std::string> entries;
  for (const auto& e : std::filesystem::directory_iterator(base_ + "/model")) {
    entries.push_back(e.path().filename().string());
  }
  EXPECT_THAT(entries, ElementsAre("7"));

  auto reader = BundleReader::Open(dir + "/variables/variables");
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto w = (*reader)->Read("layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE", DT_FLOAT);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_THAT(w->flat<float>(), ElementsAre(2, 3));

  auto model = ReadSavedModel(dir);
  ASSERT_TRUE(model.ok()) << model.status();
  const MetaGraphDef& meta = model->meta_graphs(0);
  EXPECT_THAT(meta.meta_info_def().tags(), ElementsAre("serve"));
  EXPECT_EQ(meta.saver_def().restore_op_name(), "save/restore_all");
  EXPECT_EQ(meta.saver_def().filename_tensor_name(), "save/filename:0");

  SavedModelBundle b;
  s = LoadSavedModel(SessionOptions(), RunOptions(), base_ + "/model", {"serve"}, &b);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(b.export_dir, dir);
  std::vector<Tensor> out;
  s = b.session->Run(
      {{"x:0", Tensor::FromVector<float>(std::vector<float>{1, 1, 2, 0}, TensorShape({2, 2}))}},
      {"y:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(out[0].flat<float>(), ElementsAre(3, 4, 5, 1));

  // The saver's save op writes a checkpoint of the current values.
  const std::string prefix = base_ + "/saved_again";
  s = b.session->Run(
      {{meta.saver_def().filename_tensor_name(), Tensor::Scalar<std::string>(prefix)}},
      {meta.saver_def().save_tensor_name()}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  auto again = BundleReader::Open(prefix);
  ASSERT_TRUE(again.ok()) << again.status();
  auto bias = (*again)->Read("layer/b", DT_FLOAT);
  ASSERT_TRUE(bias.ok()) << bias.status();
  EXPECT_EQ(bias->scalar<float>(), 1.0f);
}

TEST_F(WriterTest, BadExportsAreErrorsNamingTheVariable) {
  const std::string dir = base_ + "/1";
  ASSERT_TRUE(
      SaveSavedModel(AffineModel(Tensor::FromVector<float>({2, 3}), Tensor::Scalar<float>(1)), dir)
          .ok());
  absl::Status s =
      SaveSavedModel(AffineModel(Tensor::FromVector<float>({2, 3}), Tensor::Scalar<float>(1)), dir);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;

  s = SaveSavedModel(AffineModel(Tensor::FromVector<float>({2, 3, 4}), Tensor::Scalar<float>(1)),
                     base_ + "/2");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("exported variable 'layer/w' has shape [2] but its value has shape [3]"));
  s = SaveSavedModel(AffineModel(Tensor::FromVector<float>({2, 3}), Tensor::Scalar<int32_t>(1)),
                     base_ + "/2");
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("'layer/b' holds float32 but its value is int32"));
  SavedModelExport missing =
      AffineModel(Tensor::FromVector<float>({2, 3}), Tensor::Scalar<float>(1));
  missing.variables[0].node = "nope";
  s = SaveSavedModel(missing, base_ + "/2");
  EXPECT_THAT(std::string(s.message()), HasSubstr("'nope' is not a node of the graph"));
  missing.variables[0].node = "mul";
  s = SaveSavedModel(missing, base_ + "/2");
  EXPECT_THAT(std::string(s.message()), HasSubstr("'mul' is a Mul, not a VarHandleOp"));
  EXPECT_FALSE(std::filesystem::exists(base_ + "/2"));
}

}  // namespace
}  // namespace distflow
