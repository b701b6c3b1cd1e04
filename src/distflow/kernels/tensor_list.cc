#include "distflow/kernels/tensor_list.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {

std::string TensorList::DebugString() const {
  return absl::StrCat("TensorList<", DataTypeString(element_dtype), ", ",
                      element_shape.DebugString(), ", ", elements.size(), " elements>");
}

absl::StatusOr<std::shared_ptr<const TensorList>> TensorList::FromHandle(const Tensor& handle,
                                                                         DataType dtype) {
  if (handle.dtype() != DT_VARIANT || handle.dims() != 0) {
    return errors::InvalidArgument("a TensorList handle must be a scalar variant, got ",
                                   DataTypeString(handle.dtype()), " ",
                                   handle.shape().DebugString());
  }
  std::shared_ptr<const TensorList> list = handle.scalar<Variant>().get<TensorList>();
  if (list == nullptr) {
    return errors::InvalidArgument("the variant holds ", handle.scalar<Variant>().TypeName(),
                                   ", not a TensorList");
  }
  if (list->element_dtype != dtype) {
    return errors::InvalidArgument("the list holds ", DataTypeString(list->element_dtype),
                                   " elements but the op's element_dtype is ",
                                   DataTypeString(dtype));
  }
  return list;
}

Tensor TensorList::ToHandle(std::shared_ptr<const TensorList> list) {
  return Tensor::Scalar<Variant>(Variant(std::move(list)));
}

}  // namespace distflow
