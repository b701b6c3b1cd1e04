// ShuffleDataset and ShuffleDatasetV3: the input's elements in random
// order. The iterator fills a buffer with up to buffer_size elements, then
// repeatedly yields a uniformly chosen buffered element and refills its slot
// from the input, as TensorFlow does; buffer_size >= the input's size gives
// a uniform permutation. Each iterator takes its seeds from a SeedGenerator
// (data/seed_generator.h): ShuffleDataset's kernel owns one per (seed,
// seed2, reshuffle_each_iteration), so the order sequence continues across
// steps that re-create the dataset; ShuffleDatasetV3 reads it from its
// seed_generator resource input.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distflow/core/random.h"
#include "distflow/core/status.h"
#include "distflow/data/dataset_op_kernel.h"
#include "distflow/data/seed_generator.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/resource_mgr.h"

namespace distflow {
namespace {

class ShuffleDataset final : public DatasetBase {
 public:
  ShuffleDataset(std::string node, std::string op, DatasetPtr input, int64_t buffer_size,
                 RefPtr<SeedGenerator> seeds)
      : DatasetBase(std::move(node), input->output_dtypes(), input->output_shapes()),
        op_(std::move(op)),
        input_(std::move(input)),
        buffer_size_(buffer_size),
        seeds_(std::move(seeds)) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    DF_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(
        new Iterator(std::static_pointer_cast<const ShuffleDataset>(shared_from_this()),
                     std::move(input), seeds_->NextIterationSeeds()));
  }

 private:
  std::string OpName() const override { return op_; }

  class Iterator final : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const ShuffleDataset> dataset, std::unique_ptr<IteratorBase> input,
             std::pair<uint64_t, uint64_t> seeds)
        : dataset_(std::move(dataset)), input_(std::move(input)), gen_(seeds.first, seeds.second) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      while (input_ != nullptr && static_cast<int64_t>(buffer_.size()) < dataset_->buffer_size_) {
        std::vector<Tensor> element;
        bool end = false;
        DF_RETURN_IF_ERROR(input_->GetNext(ctx, &element, &end));
        if (end) {
          input_.reset();
          break;
        }
        buffer_.push_back(std::move(element));
      }
      out->clear();
      *end_of_sequence = buffer_.empty();
      if (*end_of_sequence) return absl::OkStatus();
      const size_t pick = gen_.Rand64() % buffer_.size();
      *out = std::move(buffer_[pick]);
      buffer_[pick] = std::move(buffer_.back());
      buffer_.pop_back();
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const ShuffleDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;  // null once exhausted
    std::vector<std::vector<Tensor>> buffer_;
    random::SimplePhilox gen_;
  };

  const std::string op_;
  const DatasetPtr input_;
  const int64_t buffer_size_;
  const RefPtr<SeedGenerator> seeds_;
};

// Inputs 0-3 of both ops: the input dataset, buffer_size, seed, seed2.
class ShuffleDatasetOpBase : public DatasetOpKernel {
 public:
  explicit ShuffleDatasetOpBase(OpKernelConstruction* ctx) : DatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("reshuffle_each_iteration", &reshuffle_));
  }

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(DatasetPtr input, DatasetInput(ctx, 0));
    DF_RETURN_IF_ERROR(CheckSameStructure(*input));
    DF_ASSIGN_OR_RETURN(int64_t buffer_size, Int64Input(ctx, 1));
    if (buffer_size <= 0) {
      return errors::InvalidArgument(InputName(1), " must be positive, got ", buffer_size);
    }
    DF_ASSIGN_OR_RETURN(int64_t seed, Int64Input(ctx, 2));
    DF_ASSIGN_OR_RETURN(int64_t seed2, Int64Input(ctx, 3));
    DF_ASSIGN_OR_RETURN(RefPtr<SeedGenerator> seeds, Seeds(ctx, seed, seed2));
    return std::make_shared<const ShuffleDataset>(name(), type_string(), std::move(input),
                                                  buffer_size, std::move(seeds));
  }

  virtual absl::StatusOr<RefPtr<SeedGenerator>> Seeds(OpKernelContext* ctx, int64_t seed,
                                                      int64_t seed2) = 0;
  bool reshuffle() const { return reshuffle_; }

 private:
  bool reshuffle_ = true;
};

class ShuffleDatasetOp : public ShuffleDatasetOpBase {
 public:
  using ShuffleDatasetOpBase::ShuffleDatasetOpBase;

 protected:
  // The kernel's generator, made anew only when the seeds change.
  absl::StatusOr<RefPtr<SeedGenerator>> Seeds(OpKernelContext*, int64_t seed,
                                              int64_t seed2) override {
    absl::MutexLock lock(&mu_);
    if (seeds_ == nullptr || seeds_->seed() != seed || seeds_->seed2() != seed2) {
      seeds_.reset(new SeedGenerator(seed, seed2, reshuffle()));
    }
    return seeds_;
  }

 private:
  absl::Mutex mu_;
  RefPtr<SeedGenerator> seeds_ ABSL_GUARDED_BY(mu_);
};

class ShuffleDatasetV3Op : public ShuffleDatasetOpBase {
 public:
  using ShuffleDatasetOpBase::ShuffleDatasetOpBase;

 protected:
  absl::StatusOr<RefPtr<SeedGenerator>> Seeds(OpKernelContext* ctx, int64_t, int64_t) override {
    DF_ASSIGN_OR_RETURN(ResourceHandle handle, HandleFromInput(ctx, 4));
    return LookupResource<SeedGenerator>(ctx, handle);
  }
};

REGISTER_KERNEL_BUILDER(Name("ShuffleDataset").Device(kDeviceCpu), ShuffleDatasetOp);
REGISTER_KERNEL_BUILDER(Name("ShuffleDatasetV3").Device(kDeviceCpu), ShuffleDatasetV3Op);

}  // namespace
}  // namespace distflow
