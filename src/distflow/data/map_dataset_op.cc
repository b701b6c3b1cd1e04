// MapDataset and ParallelMapDatasetV2: each input element, passed (with the
// captured other_arguments after it) to the library function `f`, becomes
// the function's results, computed by the function runtime of the kernel's
// device. MapDataset makes one call at a time; ParallelMapDatasetV2 keeps up
// to num_parallel_calls calls in flight (-1, AUTOTUNE, means the number of
// CPUs), reading ahead of the consumer, and yields results in input order (`deterministic`
// "false" is accepted and still yields in order). A call's error is
// returned in the element's place, naming the function.
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/status.h"
#include "distflow/core/threadpool.h"
#include "distflow/data/dataset_op_kernel.h"
#include "distflow/framework/function_library_runtime.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

constexpr int64_t kAutotune = -1;
// How often a GetNext waiting for a map call looks at its step's cancellation.
constexpr absl::Duration kCancellationPoll = absl::Milliseconds(5);

// The function and what it captured, shared by a dataset and its iterators.
struct MapFunction {
  FunctionLibraryRuntime* runtime;
  FunctionLibraryRuntime::Handle handle;
  std::string name;
  std::vector<Tensor> captured;
  DataTypeVector output_dtypes;

  // Starts f(element..., captured...) and calls `done` with its results;
  // `cancellation` (which must outlive the call) cancels it.
  void Call(CancellationManager* cancellation, std::vector<Tensor> element,
            std::vector<Tensor>* out, std::function<void(absl::Status)> done) const {
    for (const Tensor& t : captured) element.push_back(t);
    FunctionLibraryRuntime::CallOptions options;
    options.cancellation_manager = cancellation;
    runtime->Run(
        options, handle, std::move(element), out,
        [this, out, done = std::move(done)](const absl::Status& s) { done(Check(s, *out)); });
  }

 private:
  absl::Status Check(const absl::Status& s, const std::vector<Tensor>& out) const {
    if (!s.ok()) return errors::Annotate(s, absl::StrCat("in map function '", name, "'"));
    if (out.size() != output_dtypes.size()) {
      return errors::InvalidArgument("map function '", name, "' returned ", out.size(),
                                     " values; the dataset declares ", output_dtypes.size());
    }
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].dtype() != output_dtypes[i]) {
        return errors::InvalidArgument("map function '", name, "' returned ",
                                       DataTypeString(out[i].dtype()), " as result ", i,
                                       "; the dataset declares ", DataTypeString(output_dtypes[i]));
      }
    }
    return absl::OkStatus();
  }
};

class MapDataset final : public DatasetBase {
 public:
  // `parallelism` 0: MapDataset (one call at a time, inline).
  MapDataset(std::string node, std::string op, std::vector<PartialTensorShape> shapes,
             DatasetPtr input, std::shared_ptr<const MapFunction> fn, int64_t parallelism)
      : DatasetBase(std::move(node), fn->output_dtypes, std::move(shapes)),
        op_(std::move(op)),
        input_(std::move(input)),
        fn_(std::move(fn)),
        parallelism_(parallelism) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    DF_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(
        new Iterator(fn_, std::move(input), std::max<int64_t>(parallelism_, 1)));
  }

 private:
  std::string OpName() const override { return op_; }

  // Keeps up to `parallelism` calls in flight, in input order. A call may
  // outlive the step whose GetNext started it (its result is taken by a
  // later step), so calls are cancelled by the iterator's own manager, never
  // by a step's; a step cancelled while it waits for a result returns
  // Cancelled and leaves the call in flight for the next GetNext.
  class Iterator final : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const MapFunction> fn, std::unique_ptr<IteratorBase> input,
             int64_t parallelism)
        : fn_(std::move(fn)), input_(std::move(input)), parallelism_(parallelism) {}

    // In-flight calls write into their slots: cancel them and wait.
    ~Iterator() override {
      calls_cancellation_.StartCancel();
      for (const std::shared_ptr<Slot>& slot : in_flight_) slot->done.WaitForNotification();
    }

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      while (input_ != nullptr && static_cast<int64_t>(in_flight_.size()) < parallelism_) {
        std::vector<Tensor> element;
        bool end = false;
        DF_RETURN_IF_ERROR(input_->GetNext(ctx, &element, &end));
        if (end) {
          input_.reset();
          break;
        }
        auto slot = std::make_shared<Slot>();
        in_flight_.push_back(slot);
        // The callback keeps the slot and the function alive.
        fn_->Call(&calls_cancellation_, std::move(element), &slot->result,
                  [slot, fn = fn_](absl::Status s) {
                    slot->status = std::move(s);
                    slot->done.Notify();
                  });
      }
      out->clear();
      *end_of_sequence = in_flight_.empty();
      if (*end_of_sequence) return absl::OkStatus();
      const std::shared_ptr<Slot>& waiting = in_flight_.front();
      CancellationManager* step = ctx->cancellation_manager;
      while (!waiting->done.WaitForNotificationWithTimeout(kCancellationPoll)) {
        if (step != nullptr && step->IsCancelled()) {
          return errors::Cancelled("the step was cancelled while waiting for map function '",
                                   fn_->name, "'");
        }
      }
      std::shared_ptr<Slot> front = std::move(in_flight_.front());
      in_flight_.pop_front();
      DF_RETURN_IF_ERROR(front->status);
      *out = std::move(front->result);
      return absl::OkStatus();
    }

   private:
    struct Slot {
      absl::Notification done;
      absl::Status status;
      std::vector<Tensor> result;
    };

    const std::shared_ptr<const MapFunction> fn_;
    std::unique_ptr<IteratorBase> input_;  // null once exhausted
    const int64_t parallelism_;
    std::deque<std::shared_ptr<Slot>> in_flight_;
    CancellationManager calls_cancellation_;
  };

  const std::string op_;
  const DatasetPtr input_;
  const std::shared_ptr<const MapFunction> fn_;
  const int64_t parallelism_;
};

class MapDatasetOp : public DatasetOpKernel {
 public:
  explicit MapDatasetOp(OpKernelConstruction* ctx)
      : DatasetOpKernel(ctx), parallel_(ctx->def().op() != "MapDataset") {
    const AttrValue* f = AttrSlice(ctx->def()).Find("f");
    OP_REQUIRES(ctx, f != nullptr && f->has_func(),
                errors::InvalidArgument("node '", name(), "' needs a function attr 'f'"));
    func_ = f->func();
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Targuments", &captured_types_));
  }

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    DF_ASSIGN_OR_RETURN(DatasetPtr input, DatasetInput(ctx, 0));
    FunctionLibraryRuntime* runtime = ctx->function_library();
    if (runtime == nullptr) {
      return errors::FailedPrecondition("node '", name(), "' maps function '", func_.name(),
                                        "' but the graph has no function library");
    }
    auto fn = std::make_shared<MapFunction>();
    fn->runtime = runtime;
    fn->name = func_.name();
    fn->output_dtypes = output_types();
    DF_ASSIGN_OR_RETURN(fn->handle, runtime->Instantiate(func_));
    const int num_captured = static_cast<int>(captured_types_.size());
    for (int i = 1; i <= num_captured; ++i) fn->captured.push_back(ctx->input(i));
    DataTypeVector want = input->output_dtypes();
    want.insert(want.end(), captured_types_.begin(), captured_types_.end());
    const DataTypeVector* args = runtime->arg_types(fn->handle);
    const DataTypeVector* rets = runtime->ret_types(fn->handle);
    if (args == nullptr || *args != want) {
      return errors::InvalidArgument("node '", name(), "': function '", func_.name(), "' takes ",
                                     args == nullptr ? "?" : DataTypeSliceString(*args),
                                     " but is called with ", DataTypeSliceString(want),
                                     " (the input's components, then the captured arguments)");
    }
    if (rets == nullptr || *rets != output_types()) {
      return errors::InvalidArgument("node '", name(), "': function '", func_.name(), "' returns ",
                                     rets == nullptr ? "?" : DataTypeSliceString(*rets),
                                     " but output_types is ", DataTypeSliceString(output_types()));
    }
    int64_t parallelism = 0;
    if (parallel_) {
      DF_ASSIGN_OR_RETURN(parallelism, Int64Input(ctx, 1 + num_captured));
      if (parallelism == kAutotune) parallelism = NumSchedulableCPUs();
      if (parallelism < 1) {
        return errors::InvalidArgument(InputName(1 + num_captured),
                                       " must be positive or -1 (AUTOTUNE), got ", parallelism);
      }
    }
    return std::make_shared<const MapDataset>(name(), type_string(), output_shapes(),
                                              std::move(input), std::move(fn), parallelism);
  }

 private:
  const bool parallel_;
  NameAttrList func_;
  DataTypeVector captured_types_;
};

REGISTER_KERNEL_BUILDER(Name("MapDataset").Device(kDeviceCpu), MapDatasetOp);
REGISTER_KERNEL_BUILDER(Name("ParallelMapDatasetV2").Device(kDeviceCpu), MapDatasetOp);

}  // namespace
}  // namespace distflow
