// ZipDataset: element i is the components of element i of every input,
// concatenated in input order; the sequence ends with the shortest input.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/data/dataset_op_kernel.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class ZipDataset final : public DatasetBase {
 public:
  ZipDataset(std::string node, DataTypeVector dtypes, std::vector<PartialTensorShape> shapes,
             std::vector<DatasetPtr> inputs)
      : DatasetBase(std::move(node), std::move(dtypes), std::move(shapes)),
        inputs_(std::move(inputs)) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    std::vector<std::unique_ptr<IteratorBase>> inputs;
    for (const DatasetPtr& d : inputs_) {
      DF_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, d->MakeIterator());
      inputs.push_back(std::move(it));
    }
    return std::unique_ptr<IteratorBase>(new Iterator(std::move(inputs)));
  }

 private:
  std::string OpName() const override { return "ZipDataset"; }

  class Iterator final : public IteratorBase {
   public:
    explicit Iterator(std::vector<std::unique_ptr<IteratorBase>> inputs)
        : inputs_(std::move(inputs)) {}
    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      *end_of_sequence = inputs_.empty();
      std::vector<Tensor> part;
      for (size_t i = 0; i < inputs_.size() && !*end_of_sequence; ++i) {
        DF_RETURN_IF_ERROR(inputs_[i]->GetNext(ctx, &part, end_of_sequence));
        for (Tensor& t : part) out->push_back(std::move(t));
      }
      if (*end_of_sequence) {
        inputs_.clear();
        out->clear();
      }
      return absl::OkStatus();
    }

   private:
    std::vector<std::unique_ptr<IteratorBase>> inputs_;  // empty once exhausted
  };

  const std::vector<DatasetPtr> inputs_;
};

class ZipDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    std::vector<DatasetPtr> inputs;
    DataTypeVector dtypes;
    std::vector<PartialTensorShape> shapes;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      DF_ASSIGN_OR_RETURN(
          DatasetPtr d,
          DatasetFromVariantTensor(ctx->input(i),
                                   absl::StrCat("input_datasets[", i, "] of node '", name(), "'")));
      dtypes.insert(dtypes.end(), d->output_dtypes().begin(), d->output_dtypes().end());
      shapes.insert(shapes.end(), d->output_shapes().begin(), d->output_shapes().end());
      inputs.push_back(std::move(d));
    }
    if (dtypes != output_types()) {
      return errors::InvalidArgument("node '", name(), "' declares output_types ",
                                     DataTypeSliceString(output_types()), " but its inputs yield ",
                                     DataTypeSliceString(dtypes));
    }
    return std::make_shared<const ZipDataset>(name(), std::move(dtypes), output_shapes(),
                                              std::move(inputs));
  }
};

REGISTER_KERNEL_BUILDER(Name("ZipDataset").Device(kDeviceCpu), ZipDatasetOp);

}  // namespace
}  // namespace distflow
