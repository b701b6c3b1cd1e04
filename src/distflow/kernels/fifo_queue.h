// FIFOQueue: the resource behind FIFOQueueV2 — a bounded first-in
// first-out queue of tuples of tensors (one tensor per component, each of
// the queue's component type and, when the queue declares shapes, of that
// shape).
//
// Enqueue and dequeue never block a thread: a request that cannot finish at
// once is parked as an attempt and completed later, through its callback,
// by whichever call makes progress possible (an enqueue releases waiting
// dequeues, a dequeue waiting enqueues). Attempts complete in arrival order
// (FIFO fairness). Each attempt registers with its step's
// CancellationManager: cancelling the step completes it with Cancelled and
// leaves the queue as if it never arrived. After Close, new enqueues fail
// with Cancelled; pending ones still complete unless
// cancel_pending_enqueues; a dequeue that cannot be satisfied any more fails
// with OutOfRange and gives back what it had taken.
//
// Callbacks run without the queue's lock held, on the thread of the call
// that completed them. All methods are thread-safe.
#ifndef DISTFLOW_KERNELS_FIFO_QUEUE_H_
#define DISTFLOW_KERNELS_FIFO_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/resource_mgr.h"
#include "distflow/framework/tensor.h"

namespace distflow {

class FIFOQueue : public ResourceBase {
 public:
  using Tuple = std::vector<Tensor>;
  using DoneCallback = std::function<void(const absl::Status&)>;
  // The dequeued tuple (Dequeue) or the batched tuple (DequeueMany), valid
  // iff the status is OK.
  using DequeueCallback = std::function<void(const absl::Status&, Tuple)>;

  // `shapes` is empty (any shapes) or has one entry per component.
  // capacity < 0 means unbounded.
  FIFOQueue(std::string name, DataTypeVector component_types,
            std::vector<PartialTensorShape> shapes, int64_t capacity);

  const std::string& name() const { return name_; }
  const DataTypeVector& component_types() const { return component_types_; }
  const std::vector<PartialTensorShape>& shapes() const { return shapes_; }
  int64_t capacity() const { return capacity_; }

  // InvalidArgument naming the queue unless a shared queue created with
  // these attrs would be this one.
  absl::Status MatchesAttrs(const DataTypeVector& component_types,
                            const std::vector<PartialTensorShape>& shapes, int64_t capacity) const;
  // InvalidArgument naming the queue unless `types` are its component types.
  absl::Status CheckComponentTypes(DataTypeSlice types) const;
  // InvalidArgument naming the queue and component unless `tuple` is one
  // element (or, with `batched`, a batch along dimension 0) of this queue.
  absl::Status ValidateTuple(const Tuple& tuple, bool batched) const;

  // Adds one element. REQUIRES: ValidateTuple(tuple, false) is OK.
  void TryEnqueue(Tuple tuple, CancellationManager* cm, DoneCallback done);
  // Adds the elements of a batch, in order; other enqueues do not interleave
  // with them. REQUIRES: ValidateTuple(tuple, true) is OK.
  void TryEnqueueMany(const Tuple& tuple, CancellationManager* cm, DoneCallback done);
  // Removes one element.
  void TryDequeue(CancellationManager* cm, DequeueCallback done);
  // Removes `n` elements and stacks each component along a new dimension 0.
  // REQUIRES: n >= 0; with n == 0, the shapes are fully defined.
  void TryDequeueMany(int64_t n, CancellationManager* cm, DequeueCallback done);

  // Closes the queue (idempotent).
  void Close(bool cancel_pending_enqueues);
  int64_t size() const;

  std::string DebugString() const override;

 private:
  struct Attempt;
  using AttemptList = std::list<std::unique_ptr<Attempt>>;

  ~FIFOQueue() override;
  // Registers `a` with its step's cancellation, parks it, and completes
  // whatever can complete.
  void AddAttempt(std::unique_ptr<Attempt> a, bool is_enqueue);
  // Moves every attempt that can finish now to `done`.
  void FlushLocked(AttemptList* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands a dequeue attempt's taken elements back to the head of the queue.
  void RestoreLocked(Attempt* a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Cancel(int64_t id);
  // Deregisters and runs the callbacks of finished attempts. Called without
  // mu_, last thing in a method: it may drop the queue's last reference.
  static void RunDone(AttemptList* done);
  // Stacks `n` element tuples into one batched tuple.
  absl::Status Stack(const std::vector<Tuple>& elements, Tuple* out) const;

  const std::string name_;
  const DataTypeVector component_types_;
  const std::vector<PartialTensorShape> shapes_;
  const int64_t capacity_;

  mutable absl::Mutex mu_;
  std::deque<Tuple> queue_ ABSL_GUARDED_BY(mu_);
  AttemptList enqueue_attempts_ ABSL_GUARDED_BY(mu_);
  AttemptList dequeue_attempts_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_FIFO_QUEUE_H_
