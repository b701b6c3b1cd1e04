#include "fashion_mnist/export.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "distflow/cc/ops/parsing_ops.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/core/status.h"
#include "distflow/saved_model/writer.h"
#include "fashion_mnist/idx_files.h"
#include "fashion_mnist/model.h"
#include "fashion_mnist/pipeline.h"

namespace distflow {
namespace fashion_mnist {

const char* const kClassNames[10] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                     "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

namespace {

TensorInfo Info(const Output& t, DataType dtype, std::initializer_list<int64_t> shape) {
  TensorInfo info;
  info.set_name(absl::StrCat(t.node()->name(), ":", t.index()));
  info.set_dtype(dtype);
  PartialTensorShape(shape).AsProto(info.mutable_tensor_shape());
  return info;
}

}  // namespace

absl::Status CheckExportDir(const std::string& export_dir) {
  std::error_code ec;
  if (export_dir.empty() || !std::filesystem::exists(export_dir, ec)) return absl::OkStatus();
  return errors::AlreadyExists("the export directory '", export_dir,
                               "' already exists; a SavedModel version is written once");
}

absl::Status ExportClassifier(const std::string& model, const std::vector<Tensor>& values,
                              const std::string& export_dir) {
  const Scope root = Scope::NewRootScope();
  // The seed only sets initial values, which the exported values replace.
  DF_ASSIGN_OR_RETURN(std::unique_ptr<Classifier> classifier, MakeClassifier(root, model, 1));
  const std::vector<Variable>& variables = classifier->variables();
  if (variables.size() != values.size()) {
    return errors::InvalidArgument("the ", model, " classifier has ", variables.size(),
                                   " variables but ", values.size(), " values were given");
  }

  // Predict: raw pixels to class ids and probabilities.
  const Scope predict = root.NewSubScope("predict");
  auto images = ops::Placeholder(root.WithOpName("images"), DT_FLOAT,
                                 ops::Placeholder::Attrs().Shape({-1, kImageBytes}));
  auto logits = classifier->Logits(predict, Standardize(predict, images));
  auto probabilities = ops::Softmax(root.WithOpName("probabilities"), logits);
  auto classes = ops::ArgMax(root.WithOpName("classes"), logits, 1);

  // Classify: tf.Example records to class names and scores.
  const Scope classify = root.NewSubScope("classify");
  auto examples = ops::Placeholder(root.WithOpName("tf_example"), DT_STRING,
                                   ops::Placeholder::Attrs().Shape({-1}));
  ops::ParseExample parsed(classify, examples, ops::Const(classify, Tensor(DT_STRING, {0})), {},
                           {ops::Const(classify, std::string("image"))},
                           {ops::Const(classify, Tensor(DT_FLOAT, {0}))}, {},
                           {PartialTensorShape({kImageBytes})});
  if (!root.ok()) return root.status();
  auto scores =
      ops::Softmax(root.WithOpName("scores"),
                   classifier->Logits(classify, Standardize(classify, parsed.dense_values[0])));
  Tensor names(DT_STRING, TensorShape({1, kNumClasses}));
  for (int i = 0; i < kNumClasses; ++i) names.flat<std::string>()[i] = kClassNames[i];
  auto batch = ops::Slice(classify, ops::Shape(classify, scores), {0}, {1});
  auto class_names =
      ops::Tile(root.WithOpName("class_names"), ops::Const(classify, names),
                ops::Concat(classify, {Output(batch), ops::Const(classify, {1})}, 0));
  DF_RETURN_IF_ERROR(root.status());

  SavedModelExport out;
  DF_RETURN_IF_ERROR(root.ToGraphDef(&out.graph));
  for (size_t i = 0; i < variables.size(); ++i) {
    out.variables.push_back({variables[i].name(), values[i], variables[i].name()});
  }
  SignatureDef& p = out.signatures["serving_default"];
  p.set_method_name("tensorflow/serving/predict");
  (*p.mutable_inputs())["images"] = Info(images, DT_FLOAT, {-1, kImageBytes});
  (*p.mutable_outputs())["classes"] = Info(classes, DT_INT64, {-1});
  (*p.mutable_outputs())["probabilities"] = Info(probabilities, DT_FLOAT, {-1, kNumClasses});
  SignatureDef& c = out.signatures["classify"];
  c.set_method_name("tensorflow/serving/classify");
  (*c.mutable_inputs())["inputs"] = Info(examples, DT_STRING, {-1});
  (*c.mutable_outputs())["classes"] = Info(class_names, DT_STRING, {-1, kNumClasses});
  (*c.mutable_outputs())["scores"] = Info(scores, DT_FLOAT, {-1, kNumClasses});
  return SaveSavedModel(out, export_dir);
}

}  // namespace fashion_mnist
}  // namespace distflow
