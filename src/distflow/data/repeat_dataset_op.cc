// RepeatDataset: the input count times over (count -1: forever), each
// repetition a fresh iterator of the input (so a shuffled input is
// reshuffled). A repetition that is empty from its start ends the sequence,
// so repeating an empty dataset forever terminates.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/data/dataset_op_kernel.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class RepeatDataset final : public DatasetBase {
 public:
  RepeatDataset(std::string node, DatasetPtr input, int64_t count)
      : DatasetBase(std::move(node), input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        count_(count) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(
        new Iterator(std::static_pointer_cast<const RepeatDataset>(shared_from_this())));
  }

 private:
  std::string OpName() const override { return "RepeatDataset"; }

  class Iterator final : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const RepeatDataset> dataset)
        : dataset_(std::move(dataset)) {}
    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      const int64_t count = dataset_->count_;
      while (count < 0 || done_ < count) {
        bool fresh = false;
        if (input_ == nullptr) {
          DF_ASSIGN_OR_RETURN(input_, dataset_->input_->MakeIterator());
          fresh = true;
        }
        DF_RETURN_IF_ERROR(input_->GetNext(ctx, out, end_of_sequence));
        if (!*end_of_sequence) return absl::OkStatus();
        input_.reset();
        ++done_;
        if (fresh) break;  // an empty repetition: every later one is empty too
      }
      done_ = count < 0 ? done_ : count;
      *end_of_sequence = true;
      out->clear();
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const RepeatDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;
    int64_t done_ = 0;  // finished repetitions
  };

  const DatasetPtr input_;
  const int64_t count_;
};

class RepeatDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(DatasetPtr input, DatasetInput(ctx, 0));
    DF_RETURN_IF_ERROR(CheckSameStructure(*input));
    DF_ASSIGN_OR_RETURN(int64_t count, Int64Input(ctx, 1));
    return std::make_shared<const RepeatDataset>(name(), std::move(input), count);
  }
};

REGISTER_KERNEL_BUILDER(Name("RepeatDataset").Device(kDeviceCpu), RepeatDatasetOp);

}  // namespace
}  // namespace distflow
