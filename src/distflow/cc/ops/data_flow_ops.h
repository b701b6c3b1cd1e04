// Client wrappers for queues and gradient accumulators (the pieces of
// synchronous replica training): a FIFO queue of tuples and a conditional
// accumulator that averages gradients and drops those computed for a stale
// step. Both are resources shared by name (shared_name) on their device, so
// every client of a cluster reaches the same one. Each class builds one node
// when constructed (see op_builder.h); errors go to the scope.
#ifndef DISTFLOW_CC_OPS_DATA_FLOW_OPS_H_
#define DISTFLOW_CC_OPS_DATA_FLOW_OPS_H_

#include <string>
#include <vector>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// Op FIFOQueueV2: a handle to a queue of tuples of `component_types`.
class FIFOQueue {
 public:
  struct Attrs {
    [[nodiscard]] Attrs Capacity(int64_t x) const {
      Attrs r = *this;
      r.capacity_ = x;
      return r;
    }
    [[nodiscard]] Attrs SharedName(std::string x) const {
      Attrs r = *this;
      r.shared_name_ = std::move(x);
      return r;
    }
    [[nodiscard]] Attrs Container(std::string x) const {
      Attrs r = *this;
      r.container_ = std::move(x);
      return r;
    }
    int64_t capacity_ = -1;
    std::string shared_name_;
    std::string container_;
  };
  FIFOQueue(const Scope& scope, const std::vector<DataType>& component_types);
  FIFOQueue(const Scope& scope, const std::vector<DataType>& component_types, const Attrs& attrs);
  operator Output() const { return handle; }
  operator Input() const { return handle; }
  Node* node() const { return handle.node(); }
  Operation operation;
  Output handle;
};

// Op QueueEnqueueV2: adds one tuple; waits while the queue is full.
class QueueEnqueue {
 public:
  QueueEnqueue(const Scope& scope, Input handle, InputList components);
  operator Operation() const { return operation; }
  Operation operation;
};

// Op QueueEnqueueManyV2: adds the rows of the components as tuples.
class QueueEnqueueMany {
 public:
  QueueEnqueueMany(const Scope& scope, Input handle, InputList components);
  operator Operation() const { return operation; }
  Operation operation;
};

// Op QueueDequeueV2: removes one tuple; waits while the queue is empty.
class QueueDequeue {
 public:
  QueueDequeue(const Scope& scope, Input handle, const std::vector<DataType>& component_types);
  Operation operation;
  OutputList components;
};

// Op QueueCloseV2.
class QueueClose {
 public:
  QueueClose(const Scope& scope, Input handle, bool cancel_pending_enqueues = false);
  operator Operation() const { return operation; }
  Operation operation;
};

// Op QueueSizeV2.
class QueueSize {
 public:
  QueueSize(const Scope& scope, Input handle);
  operator Output() const { return size; }
  Operation operation;
  Output size;
};

// Op ResourceConditionalAccumulator: averages `dtype` gradients of `shape`.
class ConditionalAccumulator {
 public:
  ConditionalAccumulator(const Scope& scope, DataType dtype, const PartialTensorShape& shape,
                         const std::string& shared_name);
  operator Output() const { return handle; }
  operator Input() const { return handle; }
  Operation operation;
  Output handle;
};

// Op ResourceAccumulatorApplyGradient: adds `gradient` unless `local_step`
// is older than the accumulator's global step.
class AccumulatorApplyGradient {
 public:
  AccumulatorApplyGradient(const Scope& scope, Input handle, Input local_step, Input gradient);
  operator Operation() const { return operation; }
  Operation operation;
};

// Op ResourceAccumulatorTakeGradient: waits for `num_required` gradients,
// returns their mean and starts a new round.
class AccumulatorTakeGradient {
 public:
  AccumulatorTakeGradient(const Scope& scope, Input handle, Input num_required, DataType dtype);
  operator Output() const { return average; }
  operator Input() const { return average; }
  Operation operation;
  Output average;
};

// Op ResourceAccumulatorSetGlobalStep.
class AccumulatorSetGlobalStep {
 public:
  AccumulatorSetGlobalStep(const Scope& scope, Input handle, Input new_global_step);
  operator Operation() const { return operation; }
  Operation operation;
};

// Op ResourceAccumulatorNumAccumulated.
class AccumulatorNumAccumulated {
 public:
  AccumulatorNumAccumulated(const Scope& scope, Input handle);
  operator Output() const { return num_accumulated; }
  Operation operation;
  Output num_accumulated;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_DATA_FLOW_OPS_H_
