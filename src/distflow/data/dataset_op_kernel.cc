#include "distflow/data/dataset_op_kernel.h"

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {

DatasetOpKernel::DatasetOpKernel(OpKernelConstruction* ctx) : OpKernel(ctx) {
  // Building a dataset only describes work; the iterator does it.
  set_expensive(false);
  if (ctx->HasAttr("output_types")) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_types", &output_types_));
  }
  if (ctx->HasAttr("output_shapes")) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_shapes", &output_shapes_));
  }
  // Inputs are named by their arg until the first list arg (dataset ops
  // with a list take it last, e.g. TensorSliceDataset's components).
  for (const auto& arg : ctx->op_def().input_arg()) {
    if (!arg.number_attr().empty() || !arg.type_list_attr().empty()) break;
    input_names_.push_back(arg.name());
  }
  OP_REQUIRES(
      ctx, !ctx->HasAttr("output_types") || output_shapes_.size() == output_types_.size(),
      errors::InvalidArgument("node '", name(), "' has ", output_types_.size(),
                              " output_types but ", output_shapes_.size(), " output_shapes"));
}

void DatasetOpKernel::Compute(OpKernelContext* ctx) {
  absl::StatusOr<DatasetPtr> dataset = MakeDataset(ctx);
  OP_REQUIRES_OK(ctx, dataset.status());
  ctx->set_output(0, DatasetToVariantTensor(*std::move(dataset)));
}

std::string DatasetOpKernel::InputName(int index) const {
  const std::string arg =
      index < static_cast<int>(input_names_.size()) ? input_names_[index] : absl::StrCat(index);
  return absl::StrCat("input '", arg, "' of node '", name(), "'");
}

absl::StatusOr<DatasetPtr> DatasetOpKernel::DatasetInput(OpKernelContext* ctx, int index) const {
  return DatasetFromVariantTensor(ctx->input(index), InputName(index));
}

absl::StatusOr<int64_t> DatasetOpKernel::Int64Input(OpKernelContext* ctx, int index) const {
  const Tensor& t = ctx->input(index);
  if (t.dtype() != DT_INT64 || t.dims() != 0) {
    return errors::InvalidArgument(InputName(index), " must be an int64 scalar, got a ",
                                   DataTypeString(t.dtype()), " tensor of shape ",
                                   t.shape().DebugString());
  }
  return t.scalar<int64_t>();
}

absl::Status DatasetOpKernel::CheckSameStructure(const DatasetBase& input) const {
  if (input.output_dtypes() != output_types_) {
    return errors::InvalidArgument("node '", name(), "' declares output_types ",
                                   DataTypeSliceString(output_types_), " but its input dataset ",
                                   input.DebugString(), " yields ",
                                   DataTypeSliceString(input.output_dtypes()));
  }
  for (size_t i = 0; i < output_shapes_.size() && i < input.output_shapes().size(); ++i) {
    if (!output_shapes_[i].IsCompatibleWith(input.output_shapes()[i])) {
      return errors::InvalidArgument("node '", name(), "' declares output shape ",
                                     output_shapes_[i].DebugString(), " for component ", i,
                                     " but its input dataset ", input.DebugString(), " yields ",
                                     input.output_shapes()[i].DebugString());
    }
  }
  return absl::OkStatus();
}

}  // namespace distflow
