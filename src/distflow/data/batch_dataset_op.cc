// BatchDatasetV2: batch_size consecutive input elements stacked along a new
// dimension 0; the last batch holds the remainder unless drop_remainder.
// The elements of a batch must agree in shape, component by component.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/data/dataset_op_kernel.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class BatchDataset final : public DatasetBase {
 public:
  BatchDataset(std::string node, std::vector<PartialTensorShape> shapes, DatasetPtr input,
               int64_t batch_size, bool drop_remainder)
      : DatasetBase(std::move(node), input->output_dtypes(), std::move(shapes)),
        input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    DF_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new Iterator(
        std::static_pointer_cast<const BatchDataset>(shared_from_this()), std::move(input)));
  }

 private:
  std::string OpName() const override { return "BatchDatasetV2"; }

  class Iterator final : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const BatchDataset> dataset, std::unique_ptr<IteratorBase> input)
        : dataset_(std::move(dataset)), input_(std::move(input)) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      std::vector<std::vector<Tensor>> elements;
      *end_of_sequence = input_ == nullptr;
      while (input_ != nullptr && static_cast<int64_t>(elements.size()) < dataset_->batch_size_) {
        std::vector<Tensor> element;
        bool end = false;
        DF_RETURN_IF_ERROR(input_->GetNext(ctx, &element, &end));
        if (end) {
          input_.reset();
          break;
        }
        elements.push_back(std::move(element));
      }
      out->clear();
      if (elements.empty() || (dataset_->drop_remainder_ &&
                               static_cast<int64_t>(elements.size()) < dataset_->batch_size_)) {
        *end_of_sequence = true;
        return absl::OkStatus();
      }
      *end_of_sequence = false;
      for (size_t c = 0; c < elements[0].size(); ++c) {
        Tensor batch;
        DF_RETURN_IF_ERROR(Stack(elements, c, &batch));
        out->push_back(std::move(batch));
      }
      return absl::OkStatus();
    }

   private:
    // Component `c` of every element, stacked.
    absl::Status Stack(const std::vector<std::vector<Tensor>>& elements, size_t c,
                       Tensor* out) const {
      const Tensor& first = elements[0][c];
      for (size_t i = 1; i < elements.size(); ++i) {
        if (elements[i][c].shape() != first.shape()) {
          return errors::InvalidArgument("cannot batch component ", c, " in node '",
                                         dataset_->node_name(), "': element 0 has shape ",
                                         first.shape().DebugString(), " but element ", i,
                                         " has shape ", elements[i][c].shape().DebugString());
        }
      }
      TensorShape shape = first.shape();
      shape.InsertDim(0, static_cast<int64_t>(elements.size()));
      if (shape.num_elements() < 0) {
        return errors::InvalidArgument("a batch of node '", dataset_->node_name(),
                                       "' would have more than 2^63 elements");
      }
      DF_RETURN_IF_ERROR(Tensor::Allocate(first.dtype(), shape, out, dataset_->node_name()));
      const int64_t n = first.NumElements();
      for (size_t i = 0; i < elements.size(); ++i) {
        CopyElements(first.dtype(), elements[i][c].raw_data(), n,
                     ElementAt(*out, static_cast<int64_t>(i) * n));
      }
      return absl::OkStatus();
    }

    const std::shared_ptr<const BatchDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;  // null once exhausted
  };

  const DatasetPtr input_;
  const int64_t batch_size_;
  const bool drop_remainder_;
};

class BatchDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(DatasetPtr input, DatasetInput(ctx, 0));
    DF_ASSIGN_OR_RETURN(int64_t batch_size, Int64Input(ctx, 1));
    if (batch_size <= 0) {
      return errors::InvalidArgument(InputName(1), " must be positive, got ", batch_size);
    }
    const Tensor& drop = ctx->input(2);
    if (drop.dtype() != DT_BOOL || drop.dims() != 0) {
      return errors::InvalidArgument(InputName(2), " must be a bool scalar");
    }
    if (input->output_dtypes() != output_types()) {
      return errors::InvalidArgument("node '", name(), "' declares output_types ",
                                     DataTypeSliceString(output_types()), " but its input ",
                                     input->DebugString(), " yields ",
                                     DataTypeSliceString(input->output_dtypes()));
    }
    for (DataType t : input->output_dtypes()) {
      if (!DataTypeIsSupported(t)) {
        return errors::InvalidArgument("node '", name(), "' cannot batch elements of type ",
                                       DataTypeString(t));
      }
    }
    return std::make_shared<const BatchDataset>(name(), output_shapes(), std::move(input),
                                                batch_size, drop.scalar<bool>());
  }
};

REGISTER_KERNEL_BUILDER(Name("BatchDatasetV2").Device(kDeviceCpu), BatchDatasetOp);

}  // namespace
}  // namespace distflow
