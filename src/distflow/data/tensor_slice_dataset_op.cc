// TensorSliceDataset: element i is row i of every component (components
// sliced along dimension 0, sharing their buffers). Every component must
// have the same number of rows.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/data/dataset_op_kernel.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class TensorSliceDataset final : public DatasetBase {
 public:
  TensorSliceDataset(std::string node, DataTypeVector dtypes,
                     std::vector<PartialTensorShape> shapes, std::vector<Tensor> components)
      : DatasetBase(std::move(node), std::move(dtypes), std::move(shapes)),
        components_(std::move(components)) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(
        new Iterator(std::static_pointer_cast<const TensorSliceDataset>(shared_from_this())));
  }

 private:
  std::string OpName() const override { return "TensorSliceDataset"; }

  class Iterator final : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const TensorSliceDataset> dataset)
        : dataset_(std::move(dataset)) {}
    absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      const std::vector<Tensor>& components = dataset_->components_;
      *end_of_sequence = next_ >= components[0].dim_size(0);
      if (*end_of_sequence) return absl::OkStatus();
      out->clear();
      for (const Tensor& c : components) {
        TensorShape row_shape = c.shape();
        row_shape.RemoveDim(0);
        Tensor row;
        row.CopyFrom(c.Slice(next_, next_ + 1), row_shape);
        out->push_back(std::move(row));
      }
      ++next_;
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const TensorSliceDataset> dataset_;
    int64_t next_ = 0;
  };

  const std::vector<Tensor> components_;
};

class TensorSliceDatasetOp : public DatasetOpKernel {
 public:
  explicit TensorSliceDatasetOp(OpKernelConstruction* ctx) : DatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Toutput_types", &dtypes_));
    OP_REQUIRES(
        ctx, output_shapes().size() == dtypes_.size(),
        errors::InvalidArgument("node '", name(), "' has ", dtypes_.size(), " components but ",
                                output_shapes().size(), " output_shapes"));
  }

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    std::vector<Tensor> components;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& c = ctx->input(i);
      if (c.dims() < 1) {
        return errors::InvalidArgument("component ", i, " of node '", name(),
                                       "' must have at least one dimension to slice, got shape ",
                                       c.shape().DebugString());
      }
      if (c.dim_size(0) != ctx->input(0).dim_size(0)) {
        return errors::InvalidArgument(
            "all components of node '", name(),
            "' must have the same size in dimension 0: ", "component 0 has shape ",
            ctx->input(0).shape().DebugString(), " but component ", i, " has shape ",
            c.shape().DebugString());
      }
      TensorShape row_shape = c.shape();
      row_shape.RemoveDim(0);
      if (!output_shapes()[i].IsCompatibleWith(row_shape)) {
        return errors::InvalidArgument(
            "component ", i, " of node '", name(), "' has rows of shape ", row_shape.DebugString(),
            " but output_shapes declares ", output_shapes()[i].DebugString());
      }
      components.push_back(c);
    }
    return std::make_shared<const TensorSliceDataset>(name(), dtypes_, output_shapes(),
                                                      std::move(components));
  }

 private:
  DataTypeVector dtypes_;
};

REGISTER_KERNEL_BUILDER(Name("TensorSliceDataset").Device(kDeviceCpu), TensorSliceDatasetOp);

}  // namespace
}  // namespace distflow
