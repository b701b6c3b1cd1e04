// Exports a trained Fashion-MNIST classifier as a SavedModel
// (saved_model/writer.h) that TensorFlow Serving or LoadSavedModel serves:
//   serving_default (predict): "images", float [-1, 784] pixel values 0-255
//       -> "classes", int64 [-1] (the most likely class, 0-9), and
//          "probabilities", float [-1, 10] (softmax of the logits)
//   classify (classify): "inputs", string [-1] serialized tf.Example records
//       with a float feature "image" of 784 pixel values
//       -> "classes", string [-1, 10] (the class names, the same for every
//          record, as TensorFlow Serving's classify API pairs them) and
//          "scores", float [-1, 10] (the probabilities)
// The serving graph standardizes the pixels as training did, so callers send
// raw pixel values. Variables keep their training names as checkpoint keys.
// Graph builder; call from one thread.
#ifndef DISTFLOW_EXAMPLES_FASHION_MNIST_EXPORT_H_
#define DISTFLOW_EXAMPLES_FASHION_MNIST_EXPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "distflow/framework/tensor.h"

namespace distflow {
namespace fashion_mnist {

// Fashion-MNIST's class names, by label.
extern const char* const kClassNames[10];

// OK when `export_dir` is empty (no export) or does not exist yet;
// AlreadyExists naming it otherwise, so a run fails before it trains.
absl::Status CheckExportDir(const std::string& export_dir);

// Writes the classifier of kind `model` whose variables (in the order
// Classifier::variables() lists them) hold `values` to `export_dir` (e.g.
// BASE/1). The errors of MakeClassifier and SaveSavedModel.
absl::Status ExportClassifier(const std::string& model, const std::vector<Tensor>& values,
                              const std::string& export_dir);

}  // namespace fashion_mnist
}  // namespace distflow

#endif  // DISTFLOW_EXAMPLES_FASHION_MNIST_EXPORT_H_
