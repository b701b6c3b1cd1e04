// SkipDataset: the input without its first count elements (count -1: all
// of them, an empty sequence).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/data/dataset_op_kernel.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class SkipDataset final : public DatasetBase {
 public:
  SkipDataset(std::string node, DatasetPtr input, int64_t count)
      : DatasetBase(std::move(node), input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        count_(count) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    DF_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(new Iterator(
        std::static_pointer_cast<const SkipDataset>(shared_from_this()), std::move(input)));
  }

 private:
  std::string OpName() const override { return "SkipDataset"; }

  class Iterator final : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const SkipDataset> dataset, std::unique_ptr<IteratorBase> input)
        : dataset_(std::move(dataset)), input_(std::move(input)) {}
    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      if (input_ == nullptr || dataset_->count_ < 0) {
        input_.reset();
        out->clear();
        *end_of_sequence = true;
        return absl::OkStatus();
      }
      *end_of_sequence = false;
      while (skipped_ < dataset_->count_) {
        DF_RETURN_IF_ERROR(input_->GetNext(ctx, out, end_of_sequence));
        if (*end_of_sequence) break;
        ++skipped_;
      }
      if (!*end_of_sequence) DF_RETURN_IF_ERROR(input_->GetNext(ctx, out, end_of_sequence));
      if (*end_of_sequence) {
        input_.reset();
        out->clear();
      }
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const SkipDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;  // null once exhausted
    int64_t skipped_ = 0;
  };

  const DatasetPtr input_;
  const int64_t count_;
};

class SkipDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(DatasetPtr input, DatasetInput(ctx, 0));
    DF_RETURN_IF_ERROR(CheckSameStructure(*input));
    DF_ASSIGN_OR_RETURN(int64_t count, Int64Input(ctx, 1));
    return std::make_shared<const SkipDataset>(name(), std::move(input), count);
  }
};

REGISTER_KERNEL_BUILDER(Name("SkipDataset").Device(kDeviceCpu), SkipDatasetOp);

}  // namespace
}  // namespace distflow
