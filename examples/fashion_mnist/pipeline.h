// The pieces of the Fashion-MNIST input pipeline that every trainer shares:
// a split's records as a dataset, a batch decoded in the graph, and the
// count of correct predictions. Graph builders; use from one thread, like
// Scope.
#ifndef DISTFLOW_EXAMPLES_FASHION_MNIST_PIPELINE_H_
#define DISTFLOW_EXAMPLES_FASHION_MNIST_PIPELINE_H_

#include <cstdint>

#include "distflow/cc/dataset.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "fashion_mnist/idx_files.h"

namespace distflow {
namespace fashion_mnist {

// Elements the training shuffle draws from: the whole training set (a
// uniform permutation each epoch, about 60 MB of records).
inline constexpr int64_t kShuffleBuffer = 60000;
// Test batches: large, since evaluation has no update to wait for.
inline constexpr int64_t kEvalBatch = 1000;
// Batches prepared ahead of the training step.
inline constexpr int64_t kPrefetch = 2;

// (image bytes, label byte) string pairs of `split`, read from its gzipped
// IDX files.
Dataset Records(const Scope& scope, const IdxSplit& split);

// Float pixels (0-255) standardized as the models expect: with the
// training set's pixel mean and deviation.
Output Standardize(const Scope& scope, const Output& pixels);

// A batch of Records decoded: float images of [batch, 784], standardized
// with the training set's pixel mean and deviation, and
// int32 labels of [batch].
struct DecodedBatch {
  Output images, labels;
};
DecodedBatch Decode(const Scope& scope, const OutputList& components);

// The number of examples (float) whose highest logit is their label's.
Output CorrectCount(const Scope& scope, const Output& logits, const Output& labels);

}  // namespace fashion_mnist
}  // namespace distflow

#endif  // DISTFLOW_EXAMPLES_FASHION_MNIST_PIPELINE_H_
