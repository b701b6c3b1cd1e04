#include "fashion_mnist/model.h"

#include <cmath>

#include "distflow/cc/ops/image_nn_ops.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/core/status.h"
#include "fashion_mnist/idx_files.h"

namespace distflow {
namespace fashion_mnist {
namespace {

// A [in, out] weight, uniform in +-sqrt(6 / (in + out)) (Glorot), sharded
// by rows as `sharding` says, and a zero bias.
struct Dense {
  Dense(const Scope& scope, const std::string& name, int64_t in, int64_t out, int64_t seed,
        const Sharding& sharding) {
    const float limit = std::sqrt(6.0f / static_cast<float>(in + out));
    auto unit = ops::RandomUniform(scope, ops::Const(scope, {in, out}), DT_FLOAT,
                                   ops::RandomUniform::Seed(seed).Seed2(seed));
    const TensorShape shape({in, out});
    weight = PartitionedVariable(
        scope, name + "/kernel", ops::Sub(scope, ops::Mul(scope, unit, 2 * limit), limit), shape,
        NumShards(shape, DT_FLOAT, sharding.min_shard_bytes, sharding.max_shards));
    bias =
        Variable(scope.WithOpName(name, "/bias"), ops::Fill(scope, ops::Const(scope, {out}), 0.0f));
  }
  Output Apply(const Scope& scope, const Output& x) const {
    return ops::BiasAdd(scope, ops::MatMul(scope, x, weight.Read(scope)), bias.Read(scope));
  }
  // The weight's shards, then the bias.
  std::vector<Variable> variables() const {
    std::vector<Variable> v = weight.shards();
    v.push_back(bias);
    return v;
  }
  PartitionedVariable weight;
  Variable bias;
};

// A [rows, cols, in, out] filter, Glorot-uniform over its fans (rows * cols
// * in, rows * cols * out), and a zero bias; stride 1, SAME padding.
struct Conv {
  Conv(const Scope& scope, const std::string& name, int64_t rows, int64_t cols, int64_t in,
       int64_t out, int64_t seed) {
    const float limit = std::sqrt(6.0f / static_cast<float>(rows * cols * (in + out)));
    auto unit = ops::RandomUniform(scope, ops::Const(scope, {rows, cols, in, out}), DT_FLOAT,
                                   ops::RandomUniform::Seed(seed).Seed2(seed));
    filter = Variable(scope.WithOpName(name, "/kernel"),
                      ops::Sub(scope, ops::Mul(scope, unit, 2 * limit), limit));
    bias =
        Variable(scope.WithOpName(name, "/bias"), ops::Fill(scope, ops::Const(scope, {out}), 0.0f));
  }
  Output Apply(const Scope& scope, const Output& x) const {
    return ops::BiasAdd(scope, ops::Conv2D(scope, x, filter.Read(scope), {1, 1, 1, 1}, "SAME"),
                        bias.Read(scope));
  }
  Variable filter, bias;
};

// 2x2 max pooling with stride 2.
Output Pool(const Scope& scope, const Output& x) {
  return ops::MaxPool(scope, x, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME");
}

class Cnn final : public Classifier {
 public:
  Cnn(const Scope& scope, int64_t seed, const Sharding& sharding)
      : conv1_(scope, "conv1", 3, 3, 1, 32, seed),
        conv2_(scope, "conv2", 3, 3, 32, 64, seed + 1),
        dense_(scope, "dense", kFlat, 128, seed + 2, sharding),
        out_(scope, "logits", 128, kNumClasses, seed + 3, sharding) {
    variables_ = {conv1_.filter, conv1_.bias, conv2_.filter, conv2_.bias};
    for (const Dense* d : {&dense_, &out_}) {
      for (const Variable& v : d->variables()) variables_.push_back(v);
    }
  }
  Output Logits(const Scope& scope, const Output& images) const override {
    auto x = ops::Reshape(scope, images, ops::Const(scope, {-1, kImageSide, kImageSide, 1}));
    auto h1 = Pool(scope, ops::Relu(scope, conv1_.Apply(scope, x)));   // [B, 14, 14, 32]
    auto h2 = Pool(scope, ops::Relu(scope, conv2_.Apply(scope, h1)));  // [B, 7, 7, 64]
    auto flat = ops::Reshape(scope, h2, ops::Const(scope, {int64_t{-1}, kFlat}));
    return out_.Apply(scope, ops::Relu(scope, dense_.Apply(scope, flat)));
  }

 private:
  static constexpr int64_t kFlat = 7 * 7 * 64;
  Conv conv1_, conv2_;
  Dense dense_, out_;
};

class Mlp final : public Classifier {
 public:
  Mlp(const Scope& scope, int64_t seed, const Sharding& sharding)
      : hidden_(scope, "hidden", kImageBytes, kHidden, seed, sharding),
        out_(scope, "logits", kHidden, kNumClasses, seed + 1, sharding) {
    for (const Dense* d : {&hidden_, &out_}) {
      for (const Variable& v : d->variables()) variables_.push_back(v);
    }
  }
  Output Logits(const Scope& scope, const Output& images) const override {
    return out_.Apply(scope, ops::Relu(scope, hidden_.Apply(scope, images)));
  }

 private:
  static constexpr int64_t kHidden = 256;
  Dense hidden_, out_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Classifier>> MakeClassifier(const Scope& scope,
                                                           const std::string& kind, int64_t seed,
                                                           const Sharding& sharding) {
  std::unique_ptr<Classifier> model;
  if (kind == "mlp") {
    model = std::make_unique<Mlp>(scope.NewSubScope("mlp"), seed, sharding);
  } else if (kind == "cnn") {
    model = std::make_unique<Cnn>(scope.NewSubScope("cnn"), seed, sharding);
  } else {
    return errors::InvalidArgument("unknown model '", kind, "' (known: mlp, cnn)");
  }
  DF_RETURN_IF_ERROR(scope.status());
  return model;
}

}  // namespace fashion_mnist
}  // namespace distflow
