// Closure: one scheduled function call and the RemoteValue it fills
// (as
// TensorFlow's coordinator Closure). The coordinator runs it on some worker; when that
// worker fails the closure is put back and runs again elsewhere, so a
// closure may run more than once (at-least-once) and counts its attempts.
//
// A closure is handed to one worker thread at a time by the ClosureQueue,
// which also sets the generation and the cancellation manager it runs under.
// attempts() may be read from any thread.
#ifndef DISTFLOW_COORDINATOR_CLOSURE_H_
#define DISTFLOW_COORDINATOR_CLOSURE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/coordinator/remote_value.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/tensor.h"

namespace distflow {

// What a closure's function learns about the run it is part of.
struct ClosureContext {
  int worker_index = 0;
  // Cancelled when an earlier closure's error is raised: long calls register
  // on it and stop. Never null.
  CancellationManager* cancellation = nullptr;
};

using ClosureFn = std::function<absl::StatusOr<std::vector<Tensor>>(const ClosureContext&)>;

class Closure {
 public:
  explicit Closure(ClosureFn fn) : fn_(std::move(fn)) {}
  Closure(const Closure&) = delete;
  Closure& operator=(const Closure&) = delete;

  // Runs the function once on `worker_index` and returns what it returned;
  // does not touch the output value (the coordinator decides what an error
  // means).
  absl::StatusOr<std::vector<Tensor>> Execute(int worker_index);

  // Fills the output as cancelled (only while it is still pending).
  void MarkCancelled() { output_.SetCancelled(); }

  const RemoteValue& output() const { return output_; }
  RemoteValue& output() { return output_; }
  int attempts() const { return attempts_.load(std::memory_order_relaxed); }

 private:
  friend class ClosureQueue;

  ClosureFn fn_;
  RemoteValue output_;
  std::atomic<int> attempts_{0};
  // Set by ClosureQueue::Get for the run that follows.
  int64_t generation_ = 0;
  std::shared_ptr<CancellationManager> cancellation_;
};

}  // namespace distflow

#endif  // DISTFLOW_COORDINATOR_CLOSURE_H_
