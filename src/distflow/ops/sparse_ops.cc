// Sparse ops: SparseToDense (the dense form of indices, values and a
// default, as feature columns build it). Names, inputs and attrs follow
// TensorFlow's.
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

absl::Status SparseToDenseShape(InferenceContext* c) {
  PartialTensorShape out;
  DF_RETURN_IF_ERROR(c->ShapeFromShapeTensor(1, &out));
  c->set_output(0, out);
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("SparseToDense")
    .Input("sparse_indices: Tindices")
    .Input("output_shape: Tindices")
    .Input("sparse_values: T")
    .Input("default_value: T")
    .Output("dense: T")
    .Attr("validate_indices: bool = true")
    .Attr("T: type")
    .Attr("Tindices: {int32, int64}")
    .SetShapeFn(SparseToDenseShape)
    .Doc(
        "A tensor of output_shape holding default_value except at sparse_indices (rows of "
        "coordinates), which hold sparse_values (one each, or one scalar for all).");

}  // namespace distflow
