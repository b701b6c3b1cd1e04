// Client wrappers for the ops gradient functions build: the unary and
// activation gradient helpers, BiasAddGrad, BroadcastGradientArgs,
// StridedSliceGrad, UnsortedSegmentSum and InvertPermutation. Each class
// builds one node when constructed (see op_builder.h): type attrs come from
// the inputs, optional attrs from the nested Attrs, and any error goes to the
// scope's status, leaving the outputs null. Not thread-safe, like Scope.
#ifndef DISTFLOW_CC_OPS_GRAD_OPS_H_
#define DISTFLOW_CC_OPS_GRAD_OPS_H_

#include <cstdint>
#include <string>
#include <utility>

#include "distflow/cc/ops.h"
#include "distflow/cc/ops/array_ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// The gradients of unary math ops from their output y and the incoming
// gradient dy: dy * y * (1 - y); dy * (1 - y * y); dy * 0.5 / y;
// dy * -0.5 * y^3.
class SigmoidGrad {
 public:
  SigmoidGrad(const Scope& scope, Input y, Input dy);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class TanhGrad {
 public:
  TanhGrad(const Scope& scope, Input y, Input dy);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class SqrtGrad {
 public:
  SqrtGrad(const Scope& scope, Input y, Input dy);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

class RsqrtGrad {
 public:
  RsqrtGrad(const Scope& scope, Input y, Input dy);
  operator Output() const { return z; }
  operator Input() const { return z; }
  Node* node() const { return z.node(); }
  Operation operation;
  Output z;
};

// The gradients of the activations from the incoming gradients and the
// activation's input (features) or, for EluGrad, its output.
class ReluGrad {
 public:
  ReluGrad(const Scope& scope, Input gradients, Input features);
  operator Output() const { return backprops; }
  operator Input() const { return backprops; }
  Node* node() const { return backprops.node(); }
  Operation operation;
  Output backprops;
};

class Relu6Grad {
 public:
  Relu6Grad(const Scope& scope, Input gradients, Input features);
  operator Output() const { return backprops; }
  operator Input() const { return backprops; }
  Node* node() const { return backprops.node(); }
  Operation operation;
  Output backprops;
};

class EluGrad {
 public:
  EluGrad(const Scope& scope, Input gradients, Input outputs);
  operator Output() const { return backprops; }
  operator Input() const { return backprops; }
  Node* node() const { return backprops.node(); }
  Operation operation;
  Output backprops;
};

class SoftplusGrad {
 public:
  SoftplusGrad(const Scope& scope, Input gradients, Input features);
  operator Output() const { return backprops; }
  operator Input() const { return backprops; }
  Node* node() const { return backprops.node(); }
  Operation operation;
  Output backprops;
};

// The gradient of BiasAdd's bias: out_backprop summed over every dimension
// but the channel dimension.
class BiasAddGrad {
 public:
  struct Attrs {
    // "NHWC" (default: channels last) or "NCHW" (channels at dimension 1).
    [[nodiscard]] Attrs DataFormat(std::string x) {
      Attrs ret = *this;
      ret.data_format_ = std::move(x);
      return ret;
    }
    std::string data_format_ = "NHWC";
  };
  static Attrs DataFormat(std::string x) { return Attrs().DataFormat(std::move(x)); }
  BiasAddGrad(const Scope& scope, Input out_backprop);
  BiasAddGrad(const Scope& scope, Input out_backprop, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// For shapes s0 and s1 that broadcast together, the dimensions of the
// broadcast result that each must be summed over (r0 for s0, r1 for s1).
class BroadcastGradientArgs {
 public:
  BroadcastGradientArgs(const Scope& scope, Input s0, Input s1);
  Node* node() const { return operation.node(); }
  Operation operation;
  Output r0;
  Output r1;
};

// A tensor of `shape` that is zero except where StridedSlice with the same
// begin/end/strides and masks reads, which holds `dy`.
class StridedSliceGrad {
 public:
  // The same masks as StridedSlice's, for the slice being differentiated.
  using Attrs = StridedSlice::Attrs;
  static Attrs BeginMask(int64_t x) { return Attrs().BeginMask(x); }
  static Attrs EndMask(int64_t x) { return Attrs().EndMask(x); }
  static Attrs EllipsisMask(int64_t x) { return Attrs().EllipsisMask(x); }
  static Attrs NewAxisMask(int64_t x) { return Attrs().NewAxisMask(x); }
  static Attrs ShrinkAxisMask(int64_t x) { return Attrs().ShrinkAxisMask(x); }
  StridedSliceGrad(const Scope& scope, Input shape, Input begin, Input end, Input strides,
                   Input dy);
  StridedSliceGrad(const Scope& scope, Input shape, Input begin, Input end, Input strides, Input dy,
                   const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// output[i, ...] = the sum of the slices data[j..., ...] whose
// segment_ids[j...] is i, for i in [0, num_segments); negative ids are
// dropped.
class UnsortedSegmentSum {
 public:
  UnsortedSegmentSum(const Scope& scope, Input data, Input segment_ids, Input num_segments);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// The inverse of the permutation x (int32 or int64): y[x[i]] = i.
class InvertPermutation {
 public:
  InvertPermutation(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_GRAD_OPS_H_
