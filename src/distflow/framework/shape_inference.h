// The context a shape function runs in: the node, the shapes of its inputs
// (possibly partial), and the values of inputs that are known constants.
// Shape functions set the output shapes or return InvalidArgument; the
// caller prefixes errors with the node's name. Not thread-safe.
#ifndef DISTFLOW_FRAMEWORK_SHAPE_INFERENCE_H_
#define DISTFLOW_FRAMEWORK_SHAPE_INFERENCE_H_

#include <vector>

#include "absl/status/status.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"

namespace distflow {

class InferenceContext {
 public:
  // `input_tensors[i]` is the constant value of input i or nullptr.
  InferenceContext(const NodeDef& node_def, const OpDef& op_def, DataTypeVector input_types,
                   DataTypeVector output_types, std::vector<PartialTensorShape> input_shapes,
                   std::vector<const Tensor*> input_tensors);

  const NodeDef& node_def() const { return node_def_; }
  const OpDef& op_def() const { return op_def_; }
  AttrSlice attrs() const { return AttrSlice(node_def_); }
  template <typename T>
  absl::Status GetAttr(absl::string_view name, T* value) const {
    return GetNodeAttr(attrs(), name, value);
  }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const PartialTensorShape& input(int i) const { return inputs_[i]; }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  // The constant value of input i when known, else nullptr.
  const Tensor* input_tensor(int i) const { return input_tensors_[i]; }

  void set_output(int i, PartialTensorShape shape) { outputs_[i] = std::move(shape); }
  const PartialTensorShape& output(int i) const { return outputs_[i]; }
  const std::vector<PartialTensorShape>& outputs() const { return outputs_; }

  // Input i merged with "rank r"; InvalidArgument naming the input otherwise.
  absl::Status WithRank(int i, int rank, PartialTensorShape* out) const;
  absl::Status WithRankAtLeast(int i, int rank, PartialTensorShape* out) const;
  absl::Status WithRankAtMost(int i, int rank, PartialTensorShape* out) const;
  // Input i must be a scalar (rank 0).
  absl::Status WithScalar(int i) const;

  // The shape described by input i, a 1-D int32/int64 shape tensor: exact when
  // the value is known, else of known rank (when input i's length is known)
  // with unknown dims, else unknown. -1 entries are unknown dims.
  absl::Status ShapeFromShapeTensor(int i, PartialTensorShape* out) const;
  // The value of scalar int input i if known; returns false when unknown.
  bool ScalarInputValue(int i, int64_t* value) const;
  // The values of a 1-D int input if known; returns false when unknown.
  bool VectorInputValues(int i, std::vector<int64_t>* values) const;

 private:
  const NodeDef& node_def_;
  const OpDef& op_def_;
  DataTypeVector input_types_, output_types_;
  std::vector<PartialTensorShape> inputs_;
  std::vector<const Tensor*> input_tensors_;
  std::vector<PartialTensorShape> outputs_;
};

// Shape functions shared by many ops.
absl::Status UnknownShape(InferenceContext* c);    // every output unknown
absl::Status UnchangedShape(InferenceContext* c);  // output 0 = input 0
absl::Status ScalarShape(InferenceContext* c);     // output 0 = []
absl::Status NoOutputs(InferenceContext* c);
// Output 0 is the NumPy broadcast of inputs 0 and 1.
absl::Status BroadcastBinaryOpShape(InferenceContext* c);

// The NumPy broadcast of two shapes; InvalidArgument naming both when they
// cannot broadcast.
absl::Status BroadcastShapes(const PartialTensorShape& a, const PartialTensorShape& b,
                             PartialTensorShape* out);

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_SHAPE_INFERENCE_H_
