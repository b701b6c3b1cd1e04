// Client wrappers for the random ops: tensors of `shape` (a 1-D int32 or
// int64 tensor) drawn from uniform [0, 1), standard normal and truncated
// normal distributions. Seeds follow TensorFlow: both 0 (default) means
// nondeterministic; otherwise the pair fixes the sequence. Each class builds
// one node when constructed (see op_builder.h); errors go to the scope.
#ifndef DISTFLOW_CC_OPS_RANDOM_OPS_H_
#define DISTFLOW_CC_OPS_RANDOM_OPS_H_

#include <cstdint>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// The optional attrs every random op has.
struct RandomAttrs {
  [[nodiscard]] RandomAttrs Seed(int64_t x) {
    RandomAttrs ret = *this;
    ret.seed_ = x;
    return ret;
  }
  [[nodiscard]] RandomAttrs Seed2(int64_t x) {
    RandomAttrs ret = *this;
    ret.seed2_ = x;
    return ret;
  }
  int64_t seed_ = 0;
  int64_t seed2_ = 0;
};

class RandomUniform {
 public:
  using Attrs = RandomAttrs;
  RandomUniform(const Scope& scope, Input shape, DataType dtype);
  RandomUniform(const Scope& scope, Input shape, DataType dtype, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs Seed(int64_t x) { return Attrs().Seed(x); }
  static Attrs Seed2(int64_t x) { return Attrs().Seed2(x); }
  Operation operation;
  Output output;
};

// Op RandomStandardNormal.
class RandomNormal {
 public:
  using Attrs = RandomAttrs;
  RandomNormal(const Scope& scope, Input shape, DataType dtype);
  RandomNormal(const Scope& scope, Input shape, DataType dtype, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs Seed(int64_t x) { return Attrs().Seed(x); }
  static Attrs Seed2(int64_t x) { return Attrs().Seed2(x); }
  Operation operation;
  Output output;
};
using RandomStandardNormal = RandomNormal;

// Standard normal values, redrawn when more than 2 deviations from 0.
class TruncatedNormal {
 public:
  using Attrs = RandomAttrs;
  TruncatedNormal(const Scope& scope, Input shape, DataType dtype);
  TruncatedNormal(const Scope& scope, Input shape, DataType dtype, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs Seed(int64_t x) { return Attrs().Seed(x); }
  static Attrs Seed2(int64_t x) { return Attrs().Seed2(x); }
  Operation operation;
  Output output;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_RANDOM_OPS_H_
