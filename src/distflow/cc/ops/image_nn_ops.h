// Client wrappers for the image ops (ops/image_nn_ops.cc,
// ops/batch_norm_ops.cc), NHWC: Conv2D and its backprops,
// MaxPool/MaxPoolGrad, AvgPool/AvgPoolGrad, FusedBatchNormV3 and its grad. As in
// TensorFlow's C++ API, strides and ksize have 4 entries (1, rows, cols, 1)
// and padding is "SAME" or "VALID". Each class builds one node when
// constructed; errors go to the scope.
#ifndef DISTFLOW_CC_OPS_IMAGE_NN_OPS_H_
#define DISTFLOW_CC_OPS_IMAGE_NN_OPS_H_

#include <string>
#include <vector>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// One output `output`, the shape every wrapper below shares.
class ImageOpOutput {
 public:
  operator Output() const { return output; }
  operator Input() const { return output; }
  Node* node() const { return output.node(); }
  Operation operation;
  Output output;

 protected:
  explicit ImageOpOutput(Node* node);
};

// [batch, rows, cols, in] convolved with [fh, fw, in, out] filters.
class Conv2D : public ImageOpOutput {
 public:
  Conv2D(const Scope& scope, Input input, Input filter, const std::vector<int32_t>& strides,
         const std::string& padding);
};
// `input_sizes` (int32 [4]) is the shape of Conv2D's input.
class Conv2DBackpropInput : public ImageOpOutput {
 public:
  Conv2DBackpropInput(const Scope& scope, Input input_sizes, Input filter, Input out_backprop,
                      const std::vector<int32_t>& strides, const std::string& padding);
};
// `filter_sizes` (int32 [4]) is the shape of Conv2D's filter.
class Conv2DBackpropFilter : public ImageOpOutput {
 public:
  Conv2DBackpropFilter(const Scope& scope, Input input, Input filter_sizes, Input out_backprop,
                       const std::vector<int32_t>& strides, const std::string& padding);
};
class MaxPool : public ImageOpOutput {
 public:
  MaxPool(const Scope& scope, Input input, const std::vector<int32_t>& ksize,
          const std::vector<int32_t>& strides, const std::string& padding);
};
class MaxPoolGrad : public ImageOpOutput {
 public:
  MaxPoolGrad(const Scope& scope, Input orig_input, Input orig_output, Input grad,
              const std::vector<int32_t>& ksize, const std::vector<int32_t>& strides,
              const std::string& padding);
};
class AvgPool : public ImageOpOutput {
 public:
  AvgPool(const Scope& scope, Input value, const std::vector<int32_t>& ksize,
          const std::vector<int32_t>& strides, const std::string& padding);
};
class AvgPoolGrad : public ImageOpOutput {
 public:
  AvgPoolGrad(const Scope& scope, Input orig_input_shape, Input grad,
              const std::vector<int32_t>& ksize, const std::vector<int32_t>& strides,
              const std::string& padding);
};

// Batch normalization over N, H, W per channel (see
// kernels/batch_norm_ops.cc); x is float NHWC, the rest float vectors of
// the channel count. In training, mean and variance are the running values
// to update (with exponential_avg_factor) and may be empty.
class FusedBatchNormV3 {
 public:
  struct Attrs {
    float epsilon = 0.0001f;
    float exponential_avg_factor = 1.0f;
    bool is_training = true;
  };
  FusedBatchNormV3(const Scope& scope, Input x, Input scale, Input offset, Input mean,
                   Input variance, const Attrs& attrs);
  Operation operation;
  Output y, batch_mean, batch_variance, reserve_space_1, reserve_space_2, reserve_space_3;
};

class FusedBatchNormGradV3 {
 public:
  FusedBatchNormGradV3(const Scope& scope, Input y_backprop, Input x, Input scale,
                       Input reserve_space_1, Input reserve_space_2, Input reserve_space_3,
                       float epsilon, bool is_training);
  Operation operation;
  Output x_backprop, scale_backprop, offset_backprop;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_IMAGE_NN_OPS_H_
