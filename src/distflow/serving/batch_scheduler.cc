#include "distflow/serving/batch_scheduler.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/status.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {

struct BatchScheduler::Task {
  // Calls with equal keys may share a batch: the signature, the inputs'
  // names, dtypes and row shapes, and the output names in order.
  std::string key;
  std::string signature;
  NamedTensors inputs;  // sorted by name
  std::vector<std::string> output_keys;
  int64_t rows = 0;
  absl::Time enqueued;
  absl::Time deadline;
  bool taken = false;  // guarded by the scheduler's mu_
  absl::Notification done;
  // Written before `done` is notified.
  absl::Status status;
  std::vector<Tensor> outputs;
};

namespace {

std::string TaskKey(const std::string& signature, const NamedTensors& inputs,
                    const std::vector<std::string>& output_keys) {
  std::string key = absl::StrCat(signature.size(), ":", signature);
  for (const auto& [name, t] : inputs) {
    absl::StrAppend(&key, "|", name.size(), ":", name, ":", static_cast<int>(t.dtype()));
    for (int d = 1; d < t.dims(); ++d) absl::StrAppend(&key, ",", t.dim_size(d));
  }
  absl::StrAppend(&key, "|");
  for (const std::string& o : output_keys) absl::StrAppend(&key, "|", o.size(), ":", o);
  return key;
}

// The inputs of `batch` (tasks) joined along dimension 0, input by input.
template <typename Batch>
absl::StatusOr<NamedTensors> JoinInputs(const Batch& batch, int64_t rows) {
  NamedTensors joined;
  const NamedTensors& first = batch[0]->inputs;
  for (size_t i = 0; i < first.size(); ++i) {
    TensorShape shape = first[i].second.shape();
    shape.set_dim(0, rows);
    Tensor t;
    DF_RETURN_IF_ERROR(Tensor::Allocate(first[i].second.dtype(), shape, &t, first[i].first));
    int64_t offset = 0;
    for (const auto& task : batch) {
      const Tensor& part = task->inputs[i].second;
      CopyElements(part.dtype(), part.raw_data(), part.NumElements(), ElementAt(t, offset));
      offset += part.NumElements();
    }
    joined.emplace_back(first[i].first, std::move(t));
  }
  return joined;
}

}  // namespace

absl::Status ValidateBatchingOptions(const BatchingOptions& options) {
  if (options.max_batch_size <= 0) {
    return errors::InvalidArgument("max_batch_size must be positive, got ", options.max_batch_size);
  }
  if (options.batch_timeout_micros < 0) {
    return errors::InvalidArgument("batch_timeout_micros must not be negative, got ",
                                   options.batch_timeout_micros);
  }
  if (options.max_enqueued_batches <= 0) {
    return errors::InvalidArgument("max_enqueued_batches must be positive, got ",
                                   options.max_enqueued_batches);
  }
  if (options.num_batch_threads < 0 || options.num_batch_threads > 1024) {
    return errors::InvalidArgument(
        "num_batch_threads must be between 0 (one per CPU) and 1024, got ",
        options.num_batch_threads);
  }
  int64_t rows;
  if (!MultiplyWithoutOverflow(options.max_batch_size, options.max_enqueued_batches, &rows)) {
    return errors::InvalidArgument("max_batch_size * max_enqueued_batches overflows");
  }
  return absl::OkStatus();
}

BatchScheduler::BatchScheduler(const BatchingOptions& options, RunFn run, BatchObserver observer)
    : options_(options),
      run_(std::move(run)),
      observer_(std::move(observer)),
      max_queued_rows_(options.max_batch_size * options.max_enqueued_batches) {
  int64_t threads = options.num_batch_threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (int64_t i = 0; i < threads; ++i) threads_.emplace_back([this] { BatchLoop(); });
}

BatchScheduler::~BatchScheduler() {
  std::deque<std::shared_ptr<Task>> orphans;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    orphans.swap(queue_);
    queued_rows_ = 0;
    queue_changed_.SignalAll();
  }
  for (auto& task : orphans) {
    task->status = errors::Unavailable("the model version is unloading");
    task->done.Notify();
  }
  for (std::thread& t : threads_) t.join();
}

bool BatchScheduler::CanBatch(const NamedTensors& inputs) const {
  if (inputs.empty()) return false;
  const Tensor& first = inputs[0].second;
  if (first.dims() == 0) return false;
  const int64_t rows = first.dim_size(0);
  if (rows < 1 || rows > options_.max_batch_size) return false;
  for (const auto& [name, t] : inputs) {
    if (t.dims() == 0 || t.dim_size(0) != rows) return false;
  }
  return true;
}

int64_t BatchScheduler::QueuedRows() const {
  absl::MutexLock lock(&mu_);
  return queued_rows_;
}

absl::Status BatchScheduler::Run(const std::string& signature, const NamedTensors& inputs,
                                 const std::vector<std::string>& output_keys, absl::Time deadline,
                                 std::vector<Tensor>* outputs) {
  auto task = std::make_shared<Task>();
  task->signature = signature;
  task->inputs = inputs;
  std::sort(task->inputs.begin(), task->inputs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  task->output_keys = output_keys;
  task->key = TaskKey(signature, task->inputs, output_keys);
  task->rows = inputs[0].second.dim_size(0);
  task->enqueued = absl::Now();
  task->deadline = deadline;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return errors::Unavailable("the model version is unloading");
    if (queued_rows_ + task->rows > max_queued_rows_) {
      return errors::Unavailable("the batch queue is full: ", queued_rows_,
                                 " rows wait, and max_enqueued_batches * max_batch_size is ",
                                 max_queued_rows_);
    }
    queue_.push_back(task);
    queued_rows_ += task->rows;
    queue_changed_.SignalAll();
  }
  if (!task->done.WaitForNotificationWithDeadline(deadline)) {
    absl::MutexLock lock(&mu_);
    if (!task->taken) {
      auto it = std::find(queue_.begin(), queue_.end(), task);
      if (it != queue_.end()) {
        queue_.erase(it);
        queued_rows_ -= task->rows;
      }
      return errors::DeadlineExceeded("the request's deadline passed while it waited for a batch");
    }
    if (!task->done.HasBeenNotified()) {
      return errors::DeadlineExceeded("the request's deadline passed while its batch ran");
    }
  }
  if (!task->status.ok()) return task->status;
  *outputs = std::move(task->outputs);
  return absl::OkStatus();
}

void BatchScheduler::BatchLoop() {
  for (;;) {
    Batch batch = NextBatch();
    if (batch.empty()) return;
    RunBatch(batch);
  }
}

BatchScheduler::Batch BatchScheduler::NextBatch() {
  absl::MutexLock lock(&mu_);
  for (;;) {
    if (stopping_) return {};
    if (queue_.empty()) {
      queue_changed_.Wait(&mu_);
      continue;
    }
    const Task& first = *queue_.front();
    int64_t rows = 0;
    bool full = false;
    std::vector<size_t> picks;
    for (size_t i = 0; i < queue_.size(); ++i) {
      const Task& t = *queue_[i];
      if (t.key != first.key) continue;
      if (!picks.empty() && rows + t.rows > options_.max_batch_size) {
        full = true;
        break;
      }
      rows += t.rows;
      picks.push_back(i);
    }
    if (rows >= options_.max_batch_size) full = true;
    const absl::Time ready_at = first.enqueued + absl::Microseconds(options_.batch_timeout_micros);
    if (!full && absl::Now() < ready_at) {
      queue_changed_.WaitWithDeadline(&mu_, ready_at);
      continue;
    }
    Batch batch;
    batch.reserve(picks.size());
    for (size_t i : picks) {
      queue_[i]->taken = true;
      batch.push_back(queue_[i]);
    }
    for (auto it = picks.rbegin(); it != picks.rend(); ++it) queue_.erase(queue_.begin() + *it);
    queued_rows_ -= rows;
    if (!queue_.empty()) queue_changed_.Signal();
    return batch;
  }
}

void BatchScheduler::RunBatch(const Batch& batch) {
  int64_t rows = 0;
  absl::Time deadline = absl::InfinitePast();
  for (const auto& task : batch) {
    rows += task->rows;
    deadline = std::max(deadline, task->deadline);
  }
  const Task& first = *batch[0];
  if (observer_) observer_(first.signature, rows);
  std::vector<Tensor> outputs;
  absl::StatusOr<NamedTensors> joined = JoinInputs(batch, rows);
  absl::Status status = joined.status();
  if (status.ok()) status = run_(first.signature, *joined, first.output_keys, deadline, &outputs);
  for (size_t k = 0; status.ok() && k < outputs.size(); ++k) {
    if (outputs[k].dims() == 0 || outputs[k].dim_size(0) != rows) {
      status = errors::InvalidArgument(
          "signature '", first.signature, "' cannot be batched: output '", first.output_keys[k],
          "' has shape ", outputs[k].shape().DebugString(), " for a batch of ", rows,
          " rows (batching needs one output row per input row)");
    }
  }
  int64_t offset = 0;
  for (const auto& task : batch) {
    task->status = status;
    if (status.ok()) {
      for (const Tensor& out : outputs) {
        task->outputs.push_back(out.Slice(offset, offset + task->rows));
      }
    }
    offset += task->rows;
    task->done.Notify();
  }
}

}  // namespace distflow
