// Client wrappers for the array ops: placeholders, identities, shapes,
// reshaping, concatenation and splitting, slicing, gathering, OneHot. Each
// class builds one node when constructed (see op_builder.h): type attrs (T,
// Tidx, Index, ...) and list lengths (N) come from the inputs, optional attrs
// from the nested Attrs, and any error goes to the scope's status, leaving the
// outputs null.
#ifndef DISTFLOW_CC_OPS_ARRAY_OPS_H_
#define DISTFLOW_CC_OPS_ARRAY_OPS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// A tensor the caller feeds when running the graph.
class Placeholder {
 public:
  struct Attrs {
    // The shape fed values must have; unknown rank by default.
    [[nodiscard]] Attrs Shape(const PartialTensorShape& x) {
      Attrs ret = *this;
      ret.shape_ = x;
      return ret;
    }
    PartialTensorShape shape_ = PartialTensorShape::Unknown();
  };
  Placeholder(const Scope& scope, DataType dtype);
  Placeholder(const Scope& scope, DataType dtype, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs Shape(const PartialTensorShape& x) { return Attrs().Shape(x); }
  Operation operation;
  Output output;
};

// `input` unless a value of `shape` is fed in its place.
class PlaceholderWithDefault {
 public:
  PlaceholderWithDefault(const Scope& scope, Input input, const PartialTensorShape& shape);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

class Identity {
 public:
  Identity(const Scope& scope, Input input);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// Each input passed through unchanged, as one node.
class IdentityN {
 public:
  IdentityN(const Scope& scope, InputList input);
  Output operator[](size_t index) const { return output[index]; }
  Operation operation;
  OutputList output;
};

// `input` unchanged; gradients do not flow through it.
class StopGradient {
 public:
  StopGradient(const Scope& scope, Input input);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// `tensor`'s elements in `shape` (int32 or int64; one entry may be -1).
class Reshape {
 public:
  Reshape(const Scope& scope, Input tensor, Input shape);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// The optional attr of Shape and Size.
struct ShapeAttrs {
  // int32 (default) or int64.
  [[nodiscard]] ShapeAttrs OutType(DataType x) {
    ShapeAttrs ret = *this;
    ret.out_type_ = x;
    return ret;
  }
  DataType out_type_ = DT_INT32;
};

// The shape of `input` as a 1-D tensor.
class Shape {
 public:
  using Attrs = ShapeAttrs;
  Shape(const Scope& scope, Input input);
  Shape(const Scope& scope, Input input, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs OutType(DataType x) { return Attrs().OutType(x); }
  Operation operation;
  Output output;
};

// The number of elements of `input` as a scalar.
class Size {
 public:
  using Attrs = ShapeAttrs;
  Size(const Scope& scope, Input input);
  Size(const Scope& scope, Input input, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs OutType(DataType x) { return Attrs().OutType(x); }
  Operation operation;
  Output output;
};

// The rank of `input` as an int32 scalar.
class Rank {
 public:
  Rank(const Scope& scope, Input input);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// A tensor of shape `dims` with every element `value` (a scalar).
class Fill {
 public:
  Fill(const Scope& scope, Input dims, Input value);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// Zeros / ones with the shape and type of `x`.
class ZerosLike {
 public:
  ZerosLike(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

class OnesLike {
 public:
  OnesLike(const Scope& scope, Input x);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

// `x` with its dimensions permuted by `perm`.
class Transpose {
 public:
  Transpose(const Scope& scope, Input x, Input perm);
  operator Output() const { return y; }
  operator Input() const { return y; }
  Node* node() const { return y.node(); }
  Operation operation;
  Output y;
};

// `values` joined along `axis` (op ConcatV2).
class Concat {
 public:
  Concat(const Scope& scope, InputList values, Input axis);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};
using ConcatV2 = Concat;

// Same-shaped `values` stacked along a new dimension `axis` (op Pack).
class Stack {
 public:
  struct Attrs {
    // Where the new dimension goes; negative counts from the end. Default 0.
    [[nodiscard]] Attrs Axis(int64_t x) {
      Attrs ret = *this;
      ret.axis_ = x;
      return ret;
    }
    int64_t axis_ = 0;
  };
  Stack(const Scope& scope, InputList values);
  Stack(const Scope& scope, InputList values, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs Axis(int64_t x) { return Attrs().Axis(x); }
  Operation operation;
  Output output;
};
using Pack = Stack;

// `value` split into its `num` slices along `axis` (op Unpack).
class Unstack {
 public:
  struct Attrs {
    // The dimension to unstack; negative counts from the end. Default 0.
    [[nodiscard]] Attrs Axis(int64_t x) {
      Attrs ret = *this;
      ret.axis_ = x;
      return ret;
    }
    int64_t axis_ = 0;
  };
  Unstack(const Scope& scope, Input value, int64_t num);
  Unstack(const Scope& scope, Input value, int64_t num, const Attrs& attrs);
  Output operator[](size_t index) const { return output[index]; }
  static Attrs Axis(int64_t x) { return Attrs().Axis(x); }
  Operation operation;
  OutputList output;
};
using Unpack = Unstack;

// `value` cut into `num_split` equal pieces along `axis` (an int32 scalar).
class Split {
 public:
  Split(const Scope& scope, Input axis, Input value, int64_t num_split);
  Output operator[](size_t index) const { return output[index]; }
  Operation operation;
  OutputList output;
};

// The block of `input` starting at `begin` with extent `size` (-1: to the
// end).
class Slice {
 public:
  Slice(const Scope& scope, Input input, Input begin, Input size);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// Python-style strided slicing input[begin:end:strides], with masks.
class StridedSlice {
 public:
  struct Attrs {
    // Bit i set: ignore begin[i] / end[i] and use the widest range.
    [[nodiscard]] Attrs BeginMask(int64_t x) {
      Attrs ret = *this;
      ret.begin_mask_ = x;
      return ret;
    }
    [[nodiscard]] Attrs EndMask(int64_t x) {
      Attrs ret = *this;
      ret.end_mask_ = x;
      return ret;
    }
    // Bit i set: position i is an ellipsis (the remaining dimensions).
    [[nodiscard]] Attrs EllipsisMask(int64_t x) {
      Attrs ret = *this;
      ret.ellipsis_mask_ = x;
      return ret;
    }
    // Bit i set: position i inserts a new dimension of length 1.
    [[nodiscard]] Attrs NewAxisMask(int64_t x) {
      Attrs ret = *this;
      ret.new_axis_mask_ = x;
      return ret;
    }
    // Bit i set: position i takes index begin[i] and drops the dimension.
    [[nodiscard]] Attrs ShrinkAxisMask(int64_t x) {
      Attrs ret = *this;
      ret.shrink_axis_mask_ = x;
      return ret;
    }
    int64_t begin_mask_ = 0;
    int64_t end_mask_ = 0;
    int64_t ellipsis_mask_ = 0;
    int64_t new_axis_mask_ = 0;
    int64_t shrink_axis_mask_ = 0;
  };
  StridedSlice(const Scope& scope, Input input, Input begin, Input end, Input strides);
  StridedSlice(const Scope& scope, Input input, Input begin, Input end, Input strides,
               const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs BeginMask(int64_t x) { return Attrs().BeginMask(x); }
  static Attrs EndMask(int64_t x) { return Attrs().EndMask(x); }
  static Attrs EllipsisMask(int64_t x) { return Attrs().EllipsisMask(x); }
  static Attrs NewAxisMask(int64_t x) { return Attrs().NewAxisMask(x); }
  static Attrs ShrinkAxisMask(int64_t x) { return Attrs().ShrinkAxisMask(x); }
  Operation operation;
  Output output;
};

// `input` with a dimension of length 1 inserted at `axis`.
class ExpandDims {
 public:
  ExpandDims(const Scope& scope, Input input, Input axis);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// `input` without dimensions of length 1 (all, or those in Axis).
class Squeeze {
 public:
  struct Attrs {
    // The dimensions to remove (attr squeeze_dims); each must have length 1.
    [[nodiscard]] Attrs Axis(std::vector<int64_t> x) {
      Attrs ret = *this;
      ret.axis_ = std::move(x);
      return ret;
    }
    std::vector<int64_t> axis_;
  };
  Squeeze(const Scope& scope, Input input);
  Squeeze(const Scope& scope, Input input, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs Axis(std::vector<int64_t> x) { return Attrs().Axis(std::move(x)); }
  Operation operation;
  Output output;
};

// `input` repeated `multiples[i]` times along dimension i.
class Tile {
 public:
  Tile(const Scope& scope, Input input, Input multiples);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// Slices of `params` along `axis` picked by `indices`.
class GatherV2 {
 public:
  struct Attrs {
    // Leading dimensions of params and indices treated as batch. Default 0.
    [[nodiscard]] Attrs BatchDims(int64_t x) {
      Attrs ret = *this;
      ret.batch_dims_ = x;
      return ret;
    }
    int64_t batch_dims_ = 0;
  };
  GatherV2(const Scope& scope, Input params, Input indices, Input axis);
  GatherV2(const Scope& scope, Input params, Input indices, Input axis, const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs BatchDims(int64_t x) { return Attrs().BatchDims(x); }
  Operation operation;
  Output output;
};

// Rows of `params` (slices along dimension 0) picked by `indices`: the
// two-input form of TensorFlow's Gather, built as GatherV2 with axis 0.
class Gather {
 public:
  Gather(const Scope& scope, Input params, Input indices);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;
};

// A one-hot tensor: `on_value` where the index is `indices`, `off_value`
// elsewhere, with a new dimension of length `depth`.
class OneHot {
 public:
  struct Attrs {
    // Where the new dimension goes; -1 (default) means last.
    [[nodiscard]] Attrs Axis(int64_t x) {
      Attrs ret = *this;
      ret.axis_ = x;
      return ret;
    }
    int64_t axis_ = -1;
  };
  OneHot(const Scope& scope, Input indices, Input depth, Input on_value, Input off_value);
  OneHot(const Scope& scope, Input indices, Input depth, Input on_value, Input off_value,
         const Attrs& attrs);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  static Attrs Axis(int64_t x) { return Attrs().Axis(x); }
  Operation operation;
  Output output;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_ARRAY_OPS_H_
