// RangeDataset: start, start + step, ... while before stop (after it for a
// negative step), as int64 scalars. A step of 0 is an error.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/data/dataset_op_kernel.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class RangeDataset final : public DatasetBase {
 public:
  RangeDataset(std::string node, int64_t start, int64_t stop, int64_t step)
      : DatasetBase(std::move(node), {DT_INT64}, {PartialTensorShape({})}),
        start_(start),
        stop_(stop),
        step_(step) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(
        new Iterator(std::static_pointer_cast<const RangeDataset>(shared_from_this())));
  }
  // The number of elements.
  int64_t Count() const {
    // In __int128: stop - start may overflow int64.
    const __int128 span = static_cast<__int128>(stop_) - start_;
    if ((step_ > 0 && span <= 0) || (step_ < 0 && span >= 0)) return 0;
    const __int128 step = step_;
    return static_cast<int64_t>((span + step + (step > 0 ? -1 : 1)) / step);
  }

 private:
  std::string OpName() const override { return "RangeDataset"; }

  class Iterator final : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const RangeDataset> dataset)
        : dataset_(std::move(dataset)), remaining_(dataset_->Count()) {}
    absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      *end_of_sequence = remaining_ == 0;
      if (*end_of_sequence) return absl::OkStatus();
      // In __int128: produced * step may exceed int64 although the sum
      // lies between start and stop.
      const __int128 value = static_cast<__int128>(dataset_->start_) +
                             static_cast<__int128>(produced_) * dataset_->step_;
      out->assign(1, Tensor::Scalar<int64_t>(static_cast<int64_t>(value)));
      ++produced_;
      --remaining_;
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const RangeDataset> dataset_;
    int64_t remaining_;
    int64_t produced_ = 0;
  };

  const int64_t start_, stop_, step_;
};

class RangeDatasetOp : public DatasetOpKernel {
 public:
  explicit RangeDatasetOp(OpKernelConstruction* ctx) : DatasetOpKernel(ctx) {
    OP_REQUIRES(
        ctx, output_types() == DataTypeVector{DT_INT64},
        errors::InvalidArgument("node '", name(), "' yields int64 scalars; output_types is ",
                                DataTypeSliceString(output_types())));
  }

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(int64_t start, Int64Input(ctx, 0));
    DF_ASSIGN_OR_RETURN(int64_t stop, Int64Input(ctx, 1));
    DF_ASSIGN_OR_RETURN(int64_t step, Int64Input(ctx, 2));
    if (step == 0) return errors::InvalidArgument(InputName(2), " must not be 0");
    return std::make_shared<const RangeDataset>(name(), start, stop, step);
  }
};

REGISTER_KERNEL_BUILDER(Name("RangeDataset").Device(kDeviceCpu), RangeDatasetOp);

}  // namespace
}  // namespace distflow
