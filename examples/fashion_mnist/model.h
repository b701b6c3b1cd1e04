// The Fashion-MNIST classifiers, built with the C++ client API: a model
// owns its resource variables and adds its forward pass to a graph as often
// as asked (once for training, once for evaluation, sharing the
// variables). Inputs are [batch, 784] standardized float images;
// outputs are [batch, 10] logits.
//
//   mlp: 784 -> 256 (ReLU) -> 10.
//   cnn: 28x28x1 -> conv 3x3x32 (ReLU) -> max pool 2x2 -> conv 3x3x64
//        (ReLU) -> max pool 2x2 -> 3136 -> 128 (ReLU) -> 10; SAME padding.
//
// Weights start Glorot-uniform from a fixed seed, biases at zero. With
// sharding options a weight of at least two shards' worth of bytes is a
// PartitionedVariable (its shards "<name>/part_<i>", spread over the ps
// tasks by a ReplicaDeviceSetter scope). A model refers to nodes of one
// Scope's graph; build from one thread.
#ifndef DISTFLOW_EXAMPLES_FASHION_MNIST_MODEL_H_
#define DISTFLOW_EXAMPLES_FASHION_MNIST_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"
#include "distflow/training/partitioned_variable.h"
#include "distflow/training/variable.h"

namespace distflow {
namespace fashion_mnist {

class Classifier {
 public:
  virtual ~Classifier() = default;
  // Adds the forward pass over `images` to `scope`'s graph.
  virtual Output Logits(const Scope& scope, const Output& images) const = 0;
  // Every trainable variable (each shard of a partitioned one), in a fixed
  // order (checkpoint names are theirs).
  const std::vector<Variable>& variables() const { return variables_; }

 protected:
  std::vector<Variable> variables_;
};

// How weights are split (partitioned_variable.h's NumShards); the default
// keeps every weight whole.
struct Sharding {
  int64_t min_shard_bytes = 0;
  int max_shards = 1;
};

// The model named `kind` ("mlp" or "cnn"), its variables created in `scope`;
// InvalidArgument naming the known kinds for another name, or the scope's
// error.
absl::StatusOr<std::unique_ptr<Classifier>> MakeClassifier(const Scope& scope,
                                                           const std::string& kind, int64_t seed,
                                                           const Sharding& sharding = {});

}  // namespace fashion_mnist
}  // namespace distflow

#endif  // DISTFLOW_EXAMPLES_FASHION_MNIST_MODEL_H_
