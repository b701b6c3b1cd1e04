#include "fashion_mnist/pipeline.h"

#include "distflow/cc/ops/standard_ops.h"

namespace distflow {
namespace fashion_mnist {
namespace {
// The training images' pixel mean and standard deviation (0-255 scale).
constexpr float kPixelMean = 72.94f;
constexpr float kPixelStddev = 90.02f;
}  // namespace

Dataset Records(const Scope& scope, const IdxSplit& split) {
  Dataset images =
      Dataset::FixedLengthRecords(scope, {split.images}, kImageHeaderBytes, kImageBytes, 0, "GZIP");
  Dataset labels =
      Dataset::FixedLengthRecords(scope, {split.labels}, kLabelHeaderBytes, 1, 0, "GZIP");
  return Dataset::Zip(scope, {images, labels});
}

Output Standardize(const Scope& scope, const Output& pixels) {
  return ops::Mul(scope, ops::Sub(scope, pixels, kPixelMean), 1.0f / kPixelStddev);
}

DecodedBatch Decode(const Scope& scope, const OutputList& components) {
  DecodedBatch b;
  if (!scope.ok() || components.size() != 2) return b;
  auto pixels = ops::Cast(scope, ops::DecodeRaw(scope, components[0], DT_UINT8), DT_FLOAT);
  b.images = Standardize(scope, pixels);
  b.labels = ops::Cast(
      scope, ops::Reshape(scope, ops::DecodeRaw(scope, components[1], DT_UINT8), {-1}), DT_INT32);
  return b;
}

Output CorrectCount(const Scope& scope, const Output& logits, const Output& labels) {
  auto predicted = ops::ArgMax(scope, logits, 1, ops::ArgMax::OutputType(DT_INT32));
  return ops::Sum(scope, ops::Cast(scope, ops::Equal(scope, predicted, labels), DT_FLOAT), {0});
}

}  // namespace fashion_mnist
}  // namespace distflow
