// TensorList ops, as the While loops of TensorFlow 2's Keras RNN layers use
// them (tf.TensorArray lowers to these): a list is a scalar DT_VARIANT
// tensor; kernels/tensor_list.h says what it holds. Names, inputs and attrs
// follow TensorFlow's.
#include "distflow/core/status.h"
#include "distflow/framework/array_shapes.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// The element shape input `i` describes; unknown when its value is not known.
absl::StatusOr<PartialTensorShape> ElementShapeInput(InferenceContext* c, int i) {
  DF_RETURN_IF_ERROR(c->WithRankAtMost(i, 1, nullptr));
  if (c->input_tensor(i) == nullptr) return PartialTensorShape();
  return ElementShapeFromTensor(*c->input_tensor(i));
}

absl::Status GetItemShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  DF_RETURN_IF_ERROR(c->WithScalar(1));
  DF_ASSIGN_OR_RETURN(PartialTensorShape element, ElementShapeInput(c, 2));
  c->set_output(0, element);
  return absl::OkStatus();
}

absl::Status StackShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  DF_ASSIGN_OR_RETURN(PartialTensorShape element, ElementShapeInput(c, 1));
  int64_t num_elements = -1;
  DF_RETURN_IF_ERROR(c->GetAttr("num_elements", &num_elements));
  if (element.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims = {num_elements < 0 ? -1 : num_elements};
  dims.insert(dims.end(), element.dim_sizes().begin(), element.dim_sizes().end());
  c->set_output(0, PartialTensorShape(absl::Span<const int64_t>(dims)));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("TensorListReserve")
    .Input("element_shape: shape_type")
    .Input("num_elements: int32")
    .Output("handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .SetShapeFn(ScalarShape)
    .Doc("A list of num_elements elements, none set yet, of element_dtype and element_shape.");

REGISTER_OP("TensorListFromTensor")
    .Input("tensor: element_dtype")
    .Input("element_shape: shape_type")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {int32, int64}")
    .SetShapeFn(ScalarShape)
    .Doc("A list of the slices of tensor along its first dimension.");

REGISTER_OP("TensorListGetItem")
    .Input("input_handle: variant")
    .Input("index: int32")
    .Input("element_shape: int32")
    .Output("item: element_dtype")
    .Attr("element_dtype: type")
    .SetShapeFn(GetItemShape)
    .Doc("Element `index` of the list; zeros of the element shape when it was never set.");

REGISTER_OP("TensorListSetItem")
    .Input("input_handle: variant")
    .Input("index: int32")
    .Input("item: element_dtype")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("resize_if_index_out_of_bounds: bool = false")
    .SetShapeFn(ScalarShape)
    .Doc("The list with element `index` replaced by item (the input list is unchanged).");

REGISTER_OP("TensorListStack")
    .Input("input_handle: variant")
    .Input("element_shape: int32")
    .Output("tensor: element_dtype")
    .Attr("element_dtype: type")
    .Attr("num_elements: int = -1")
    .SetShapeFn(StackShape)
    .Doc("The list's elements stacked along a new first dimension.");

REGISTER_OP("TensorListLength")
    .Input("input_handle: variant")
    .Output("length: int32")
    .SetShapeFn(ScalarShape)
    .Doc("The number of elements of the list.");

REGISTER_OP("TensorListPushBack")
    .Input("input_handle: variant")
    .Input("tensor: element_dtype")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .SetShapeFn(ScalarShape)
    .Doc("The list with tensor appended (the input list is unchanged).");

}  // namespace distflow
