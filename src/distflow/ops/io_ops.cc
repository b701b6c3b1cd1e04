// Checkpoint ops: SaveV2 writes named tensors to a checkpoint at a prefix,
// RestoreV2 reads them back, MergeV2Checkpoints joins the checkpoints of a
// sharded save into one (the format, TensorFlow's, is described in
// framework/tensor_bundle.h). Names, inputs, outputs and attrs follow
// TensorFlow's; shape_and_slices entries are "" (the whole tensor) or
// TensorFlow's "dim0 dim1 ... slice" form ("4 5 0,2:-": rows 0 and 1 of a
// 4x5 tensor), as a partitioned variable is saved and restored.
#include <string>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "distflow/framework/tensor_slice.h"

namespace distflow {
namespace {

// prefix is a scalar; tensor_names and shape_and_slices are vectors of the
// same length, one entry per tensor.
absl::Status CheckpointArgs(InferenceContext* c, int num_tensors) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  for (int i : {1, 2}) {
    PartialTensorShape s;
    DF_RETURN_IF_ERROR(c->WithRank(i, 1, &s));
    if (s.dim_size(0) >= 0 && s.dim_size(0) != num_tensors) {
      return errors::InvalidArgument("input '", c->op_def().input_arg(i).name(), "' has ",
                                     s.dim_size(0), " entries but there are ", num_tensors,
                                     " tensors");
    }
  }
  return absl::OkStatus();
}

absl::Status SaveV2Shape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(CheckpointArgs(c, c->num_inputs() - 3));
  return NoOutputs(c);
}

// Each output has the shape its shape_and_slices entry names when that input
// is a known constant, and is unknown otherwise.
absl::Status RestoreV2Shape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(CheckpointArgs(c, c->num_outputs()));
  const Tensor* specs = c->input_tensor(2);
  for (int i = 0; i < c->num_outputs(); ++i) {
    PartialTensorShape out = PartialTensorShape::Unknown();
    if (specs != nullptr && specs->dtype() == DT_STRING &&
        specs->NumElements() == c->num_outputs()) {
      const std::string& spec = specs->flat<std::string>()[i];
      if (!spec.empty()) {
        TensorShape shape;
        TensorSlice slice;
        DF_RETURN_IF_ERROR(ParseShapeAndSlice(spec, &shape, &slice));
        out = slice.SliceShape(shape);
      }
    }
    c->set_output(i, out);
  }
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("SaveV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Input("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful()
    .SetShapeFn(SaveV2Shape)
    .Doc(
        "Writes tensors under tensor_names to the checkpoint at prefix, "
        "replacing it atomically.");

REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful()
    .SetShapeFn(RestoreV2Shape)
    .Doc(
        "Reads tensor_names from the checkpoint at prefix, checking their "
        "dtypes, shapes and checksums; nothing is output unless every tensor "
        "reads back intact.");

REGISTER_OP("MergeV2Checkpoints")
    .Input("checkpoint_prefixes: string")
    .Input("destination_prefix: string")
    .Attr("delete_old_dirs: bool = true")
    .Attr("allow_missing_files: bool = false")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape unused;
      DF_RETURN_IF_ERROR(c->WithRank(0, 1, &unused));
      DF_RETURN_IF_ERROR(c->WithScalar(1));
      return NoOutputs(c);
    })
    .Doc(
        "Merges the checkpoints at checkpoint_prefixes (one per shard of a "
        "save) into one at destination_prefix; with delete_old_dirs, removes "
        "their directories when they are left empty.");

}  // namespace distflow
