// Server-side batching, as TensorFlow Serving's --enable_batching does it:
// concurrent calls of one model version that agree on their signature, input
// names, dtypes and row shapes, and output names, are joined along the first
// dimension into one session call, whose outputs are split back so that each
// caller gets exactly its own rows.
//
// A batch starts with the oldest queued call and takes every later matching
// call that fits in max_batch_size rows (queue order kept); it runs when it
// is full or when its oldest call has waited batch_timeout_micros. Batches
// run on num_batch_threads threads of the scheduler's own. At most
// max_enqueued_batches * max_batch_size rows wait; a call beyond that is
// refused at once with Unavailable. Every call waits at most until its
// deadline (DeadlineExceeded: dropped from the queue, or its batch's result
// ignored). A batch whose output does not have one row per input row fails
// every call in it (the signature cannot be batched).
//
// Thread-safe. Destruction fails queued calls with Unavailable and waits for
// running batches.
#ifndef DISTFLOW_SERVING_BATCH_SCHEDULER_H_
#define DISTFLOW_SERVING_BATCH_SCHEDULER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/framework/tensor.h"

namespace distflow {

struct BatchingOptions {
  int64_t max_batch_size = 32;
  int64_t batch_timeout_micros = 1000;
  int64_t max_enqueued_batches = 100;
  // 0: one per CPU.
  int64_t num_batch_threads = 0;
};

// InvalidArgument naming the field unless every size is positive (timeout
// non-negative, threads non-negative) and the queue bound
// max_batch_size * max_enqueued_batches fits in int64.
absl::Status ValidateBatchingOptions(const BatchingOptions& options);

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class BatchScheduler {
 public:
  // Runs `signature` once on `inputs`, fetching `output_keys`.
  using RunFn = std::function<absl::Status(const std::string& signature, const NamedTensors& inputs,
                                           const std::vector<std::string>& output_keys,
                                           absl::Time deadline, std::vector<Tensor>* outputs)>;
  // Told the number of rows of every batch that runs.
  using BatchObserver = std::function<void(const std::string& signature, int64_t rows)>;

  // REQUIRES: ValidateBatchingOptions(options).ok().
  BatchScheduler(const BatchingOptions& options, RunFn run, BatchObserver observer);
  ~BatchScheduler();
  BatchScheduler(const BatchScheduler&) = delete;
  BatchScheduler& operator=(const BatchScheduler&) = delete;

  // Whether a call with `inputs` can join a batch: at least one input, every
  // input of rank >= 1 with the same number of rows, 1 to max_batch_size.
  bool CanBatch(const NamedTensors& inputs) const;

  // Rows of the calls waiting for a batch.
  int64_t QueuedRows() const;

  // Runs the call as part of a batch and sets *outputs to its rows of each
  // output. REQUIRES: CanBatch(inputs).
  absl::Status Run(const std::string& signature, const NamedTensors& inputs,
                   const std::vector<std::string>& output_keys, absl::Time deadline,
                   std::vector<Tensor>* outputs);

 private:
  struct Task;
  using Batch = std::vector<std::shared_ptr<Task>>;

  void BatchLoop();
  // Takes the next batch off the queue, waiting as the rules above say;
  // empty when the scheduler stops.
  Batch NextBatch();
  void RunBatch(const Batch& batch);

  const BatchingOptions options_;
  const RunFn run_;
  const BatchObserver observer_;
  const int64_t max_queued_rows_;

  mutable absl::Mutex mu_;
  absl::CondVar queue_changed_;
  std::deque<std::shared_ptr<Task>> queue_ ABSL_GUARDED_BY(mu_);
  int64_t queued_rows_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace distflow

#endif  // DISTFLOW_SERVING_BATCH_SCHEDULER_H_
