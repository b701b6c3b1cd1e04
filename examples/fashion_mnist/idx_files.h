// The Fashion-MNIST data set as IDX files: where they are and whether they
// are sound. Fashion-MNIST is four gzipped IDX files — 60 000 training and
// 10 000 test images of 28x28 bytes, each with a label byte 0-9 — which
// Debian's dataset-fashion-mnist installs in kDefaultFashionMnistDir.
// Stateless functions; thread-safe.
#ifndef DISTFLOW_EXAMPLES_FASHION_MNIST_IDX_FILES_H_
#define DISTFLOW_EXAMPLES_FASHION_MNIST_IDX_FILES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace distflow {
namespace fashion_mnist {

inline constexpr char kDefaultFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";
inline constexpr int kImageSide = 28;
inline constexpr int kImageBytes = kImageSide * kImageSide;
inline constexpr int kNumClasses = 10;
// IDX headers: magic, count (and rows, cols for images), 4 bytes each.
inline constexpr int kImageHeaderBytes = 16;
inline constexpr int kLabelHeaderBytes = 8;

// One split: an image file and its label file (gzipped IDX).
struct IdxSplit {
  std::string images, labels;
  int64_t count = 0;  // examples, as the headers say
};

struct FashionMnistFiles {
  IdxSplit train, test;
};

// The four files in `dir` ("train-images-idx3-ubyte.gz", ...), each read
// once in full and checked: NotFound naming a missing file; DataLoss naming
// the file for a corrupt or truncated one, a wrong IDX header (magic,
// 28x28 images), a body of the wrong length, image and label counts that
// differ, or a label outside 0-9 (with its index).
absl::StatusOr<FashionMnistFiles> OpenFashionMnist(const std::string& dir);

}  // namespace fashion_mnist
}  // namespace distflow

#endif  // DISTFLOW_EXAMPLES_FASHION_MNIST_IDX_FILES_H_
