// TensorList: what the DT_VARIANT handle of TensorFlow's list ops holds (a
// tf.TensorArray in a TF2 While loop): a sequence of tensors of one dtype
// whose shapes agree with a (partial) element shape. An element never set
// is an empty Tensor (DT_INVALID) and reads as zeros of the element shape.
// A list is immutable once it is in a Variant: the ops that change one
// (SetItem, PushBack) build a new list sharing the element buffers, so a
// handle seen by two consumers never changes under either. Const use is
// thread-safe.
#ifndef DISTFLOW_KERNELS_TENSOR_LIST_H_
#define DISTFLOW_KERNELS_TENSOR_LIST_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/variant.h"

namespace distflow {

struct TensorList : public VariantValue {
  DataType element_dtype = DT_INVALID;
  PartialTensorShape element_shape;
  std::vector<Tensor> elements;

  std::string TypeName() const override { return "TensorList"; }
  std::string DebugString() const override;

  // The list a scalar DT_VARIANT tensor holds; InvalidArgument when it is
  // not one, or when its element dtype is not `dtype`.
  static absl::StatusOr<std::shared_ptr<const TensorList>> FromHandle(const Tensor& handle,
                                                                      DataType dtype);
  // A scalar DT_VARIANT tensor holding `list`.
  static Tensor ToHandle(std::shared_ptr<const TensorList> list);
};

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_TENSOR_LIST_H_
