#include "distflow/data/dataset.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {

DatasetBase::DatasetBase(std::string node_name, DataTypeVector output_dtypes,
                         std::vector<PartialTensorShape> output_shapes)
    : node_name_(std::move(node_name)),
      output_dtypes_(std::move(output_dtypes)),
      output_shapes_(std::move(output_shapes)) {}

std::string DatasetBase::DebugString() const {
  return absl::StrCat(OpName(), " '", node_name_, "'");
}

absl::StatusOr<DatasetPtr> DatasetFromVariantTensor(const Tensor& t, const std::string& what) {
  if (t.dtype() != DT_VARIANT || t.NumElements() != 1 || t.dims() != 0) {
    return errors::InvalidArgument(what, " must be a scalar variant holding a dataset, got a ",
                                   DataTypeString(t.dtype()), " tensor of shape ",
                                   t.shape().DebugString());
  }
  DatasetPtr dataset = t.scalar<Variant>().get<DatasetBase>();
  if (dataset == nullptr) {
    return errors::InvalidArgument(what, " must hold a dataset, got ",
                                   t.scalar<Variant>().TypeName());
  }
  return dataset;
}

Tensor DatasetToVariantTensor(DatasetPtr dataset) {
  Tensor t(DT_VARIANT, TensorShape());
  t.scalar<Variant>() = Variant(std::move(dataset));
  return t;
}

}  // namespace distflow
