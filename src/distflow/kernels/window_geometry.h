// The geometry shared by the NHWC image kernels (Conv2D, pooling, their
// gradients): attrs read and checked once per kernel (strides, window,
// padding; NCHW, explicit padding and dilations other than 1 are
// Unimplemented), and, per step, the output size and leading padding of
// each spatial dimension, TensorFlow's way: SAME gives ceil(in / stride)
// outputs with the padding split evenly (the extra one after), VALID
// ceil((in - window + 1) / stride) with none. Errors name the node.
// Values; thread-safe.
#ifndef DISTFLOW_KERNELS_WINDOW_GEOMETRY_H_
#define DISTFLOW_KERNELS_WINDOW_GEOMETRY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "distflow/framework/op_kernel.h"

namespace distflow {

// What the attrs say.
struct WindowAttrs {
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t window_rows = 0, window_cols = 0;  // pooling only (ksize)
  bool same = false;                         // padding SAME (else VALID)
};

// Reads strides, padding, data_format (and ksize when `pooling`, dilations
// when present).
absl::Status ReadWindowAttrs(OpKernelConstruction* ctx, bool pooling, WindowAttrs* out);

// One step's geometry over a [batch, in_rows, in_cols, depth] input.
struct WindowGeometry {
  int64_t batch, in_rows, in_cols, depth;
  int64_t window_rows, window_cols;
  int64_t stride_rows, stride_cols;
  int64_t out_rows, out_cols;
  int64_t pad_top, pad_left;
};

// The geometry of `input_shape` (rank 4) under `attrs` with a window of
// window_rows x window_cols. InvalidArgument naming `node` for a wrong rank,
// an empty window or a window larger than a VALID input.
absl::Status ComputeWindowGeometry(const std::string& node, const TensorShape& input_shape,
                                   const WindowAttrs& attrs, int64_t window_rows,
                                   int64_t window_cols, WindowGeometry* out);

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_WINDOW_GEOMETRY_H_
