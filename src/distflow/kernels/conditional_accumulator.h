// ConditionalAccumulator: the resource behind (Resource)ConditionalAccumulator
// — it collects the gradients of one variable from several replicas for
// synchronous training. A gradient computed at a local step older than the
// accumulator's global step is stale and dropped. TakeGradient waits until
// num_required gradients have arrived, returns their mean (reduction MEAN)
// or sum (SUM), clears the accumulator and increments its global step.
//
// Takes never block a thread: one that cannot finish is parked and
// completed by the ApplyGradient that brings the count up, in arrival
// order; cancelling its step completes it with Cancelled. Callbacks run
// without the accumulator's lock. All methods are thread-safe.
#ifndef DISTFLOW_KERNELS_CONDITIONAL_ACCUMULATOR_H_
#define DISTFLOW_KERNELS_CONDITIONAL_ACCUMULATOR_H_

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/resource_mgr.h"
#include "distflow/framework/tensor.h"

namespace distflow {

class ConditionalAccumulator : public ResourceBase {
 public:
  using TakeCallback = std::function<void(const absl::Status&, Tensor)>;

  // REQUIRES: dtype is float or double; reduction_type is "MEAN" or "SUM".
  ConditionalAccumulator(std::string name, DataType dtype, PartialTensorShape shape,
                         std::string reduction_type);

  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }

  // InvalidArgument naming the accumulator unless a shared accumulator
  // created with these attrs would be this one.
  absl::Status MatchesAttrs(DataType dtype, const PartialTensorShape& shape,
                            const std::string& reduction_type) const;

  // Adds `grad` unless local_step < global step (then drops it and returns
  // OK). InvalidArgument naming both shapes when `grad` does not fit the
  // declared shape or the gradients accumulated so far.
  absl::Status TryApplyGrad(int64_t local_step, const Tensor& grad);
  // Waits for num_required gradients (see above). InvalidArgument for
  // num_required < 1.
  void TryTakeGrad(int num_required, CancellationManager* cm, TakeCallback done);
  // Gradients accumulated since the last take.
  int num_accumulated() const;
  // Sets the global step (also backwards, as TensorFlow does).
  void SetGlobalStep(int64_t new_global_step);

  std::string DebugString() const override;

 private:
  struct Take;
  using TakeList = std::list<std::unique_ptr<Take>>;

  ~ConditionalAccumulator() override;
  void FlushLocked(TakeList* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Cancel(int64_t id);
  // Called without mu_, last thing in a method.
  static void RunDone(TakeList* done);

  const std::string name_;
  const DataType dtype_;
  const PartialTensorShape shape_;
  const std::string reduction_type_;

  mutable absl::Mutex mu_;
  Tensor sum_ ABSL_GUARDED_BY(mu_);  // valid iff counter_ > 0
  int counter_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  TakeList takes_ ABSL_GUARDED_BY(mu_);
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_CONDITIONAL_ACCUMULATOR_H_
