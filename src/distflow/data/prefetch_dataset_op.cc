// PrefetchDataset: the input's elements, produced ahead of the consumer by
// a background thread into a buffer of at most buffer_size elements
// (buffer_size -1, TensorFlow's AUTOTUNE, means kAutotuneBufferSize; 0
// means no prefetching). The thread starts at the first GetNext, stops at
// the input's end or first error (which the consumer receives in order,
// after the elements before it), and is stopped and joined when the
// iterator is destroyed. A consumer waiting for an element stops with
// Cancelled when its step is cancelled.
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distflow/core/status.h"
#include "distflow/data/dataset_op_kernel.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

// The buffer AUTOTUNE gets: enough to hide a step's jitter, small enough
// that batches of images stay in cache-friendly memory.
constexpr int64_t kAutotuneBufferSize = 4;
constexpr int64_t kAutotune = -1;

class PrefetchDataset final : public DatasetBase {
 public:
  PrefetchDataset(std::string node, DatasetPtr input, int64_t buffer_size)
      : DatasetBase(std::move(node), input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        buffer_size_(buffer_size) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    DF_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    if (buffer_size_ == 0) return input;
    return std::unique_ptr<IteratorBase>(new Iterator(buffer_size_, std::move(input)));
  }

 private:
  std::string OpName() const override { return "PrefetchDataset"; }

  class Iterator final : public IteratorBase {
   public:
    Iterator(int64_t buffer_size, std::unique_ptr<IteratorBase> input)
        : buffer_size_(buffer_size), input_(std::move(input)) {}

    ~Iterator() override {
      {
        absl::MutexLock lock(&mu_);
        stopping_ = true;
        cond_.SignalAll();
      }
      if (producer_.joinable()) producer_.join();
    }

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      absl::MutexLock lock(&mu_);
      if (!producer_.joinable()) producer_ = std::thread([this] { Produce(); });
      CancellationManager* cm = ctx->cancellation_manager;
      CancellationToken token = 0;
      bool cancelled = false;
      if (cm != nullptr) {
        token = cm->get_cancellation_token();
        cancelled = !cm->RegisterCallback(token, [this, &cancelled] {
          absl::MutexLock l(&mu_);
          cancelled = true;
          cond_.SignalAll();
        });
      }
      while (buffer_.empty() && !producer_done_ && !cancelled) cond_.Wait(&mu_);
      if (cm != nullptr && !cancelled) {
        // DeregisterCallback may wait for a running callback, which takes mu_.
        mu_.Unlock();
        cm->DeregisterCallback(token);
        mu_.Lock();
      }
      if (buffer_.empty() && !producer_done_) {
        return errors::Cancelled("the step was cancelled while waiting for a prefetched element");
      }
      out->clear();
      if (buffer_.empty()) {
        *end_of_sequence = true;
        return absl::OkStatus();
      }
      Produced front = std::move(buffer_.front());
      buffer_.pop_front();
      cond_.SignalAll();
      *end_of_sequence = front.end_of_sequence;
      *out = std::move(front.element);
      return front.status;
    }

   private:
    // One result of the input: an element, its end, or its error.
    struct Produced {
      absl::Status status;
      std::vector<Tensor> element;
      bool end_of_sequence = false;
    };

    void Produce() {
      IteratorContext ctx;
      for (;;) {
        {
          absl::MutexLock lock(&mu_);
          while (static_cast<int64_t>(buffer_.size()) >= buffer_size_ && !stopping_) {
            cond_.Wait(&mu_);
          }
          if (stopping_) return;
        }
        Produced p;
        p.status = input_->GetNext(&ctx, &p.element, &p.end_of_sequence);
        absl::MutexLock lock(&mu_);
        const bool last = !p.status.ok() || p.end_of_sequence;
        // The end itself is not buffered: producer_done_ with an empty
        // buffer reports it, every time it is asked again.
        if (!p.end_of_sequence || !p.status.ok()) buffer_.push_back(std::move(p));
        cond_.SignalAll();
        if (last) {
          producer_done_ = true;
          return;
        }
      }
    }

    const int64_t buffer_size_;
    const std::unique_ptr<IteratorBase> input_;  // used by the producer only
    absl::Mutex mu_;
    absl::CondVar cond_;
    std::deque<Produced> buffer_ ABSL_GUARDED_BY(mu_);
    bool producer_done_ ABSL_GUARDED_BY(mu_) = false;
    bool stopping_ ABSL_GUARDED_BY(mu_) = false;
    std::thread producer_;
  };

  const DatasetPtr input_;
  const int64_t buffer_size_;
};

class PrefetchDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(DatasetPtr input, DatasetInput(ctx, 0));
    DF_RETURN_IF_ERROR(CheckSameStructure(*input));
    DF_ASSIGN_OR_RETURN(int64_t buffer_size, Int64Input(ctx, 1));
    if (buffer_size < 0 && buffer_size != kAutotune) {
      return errors::InvalidArgument(InputName(1), " must be >= 0 or -1 (AUTOTUNE), got ",
                                     buffer_size);
    }
    if (buffer_size == kAutotune) buffer_size = kAutotuneBufferSize;
    return std::make_shared<const PrefetchDataset>(name(), std::move(input), buffer_size);
  }
};

REGISTER_KERNEL_BUILDER(Name("PrefetchDataset").Device(kDeviceCpu), PrefetchDatasetOp);

}  // namespace
}  // namespace distflow
