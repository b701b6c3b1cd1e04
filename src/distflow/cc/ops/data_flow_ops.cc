#include "distflow/cc/ops/data_flow_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::AllOutputs;
using internal::BuildOp;

FIFOQueue::FIFOQueue(const Scope& scope, const std::vector<DataType>& component_types)
    : FIFOQueue(scope, component_types, Attrs()) {}
FIFOQueue::FIFOQueue(const Scope& scope, const std::vector<DataType>& component_types,
                     const Attrs& attrs)
    : operation(BuildOp(scope, "FIFOQueueV2", {},
                        {{"component_types", component_types},
                         {"capacity", attrs.capacity_},
                         {"shared_name", attrs.shared_name_},
                         {"container", attrs.container_}})),
      handle(operation.output(0)) {}

QueueEnqueue::QueueEnqueue(const Scope& scope, Input handle, InputList components)
    : operation(BuildOp(scope, "QueueEnqueueV2", {handle, components})) {}

QueueEnqueueMany::QueueEnqueueMany(const Scope& scope, Input handle, InputList components)
    : operation(BuildOp(scope, "QueueEnqueueManyV2", {handle, components})) {}

QueueDequeue::QueueDequeue(const Scope& scope, Input handle,
                           const std::vector<DataType>& component_types)
    : operation(BuildOp(scope, "QueueDequeueV2", {handle}, {{"component_types", component_types}})),
      components(AllOutputs(operation)) {}

QueueClose::QueueClose(const Scope& scope, Input handle, bool cancel_pending_enqueues)
    : operation(BuildOp(scope, "QueueCloseV2", {handle},
                        {{"cancel_pending_enqueues", cancel_pending_enqueues}})) {}

QueueSize::QueueSize(const Scope& scope, Input handle)
    : operation(BuildOp(scope, "QueueSizeV2", {handle})), size(operation.output(0)) {}

ConditionalAccumulator::ConditionalAccumulator(const Scope& scope, DataType dtype,
                                               const PartialTensorShape& shape,
                                               const std::string& shared_name)
    : operation(BuildOp(scope, "ResourceConditionalAccumulator", {},
                        {{"dtype", dtype}, {"shape", shape}, {"shared_name", shared_name}})),
      handle(operation.output(0)) {}

AccumulatorApplyGradient::AccumulatorApplyGradient(const Scope& scope, Input handle,
                                                   Input local_step, Input gradient)
    : operation(
          BuildOp(scope, "ResourceAccumulatorApplyGradient", {handle, local_step, gradient})) {}

AccumulatorTakeGradient::AccumulatorTakeGradient(const Scope& scope, Input handle,
                                                 Input num_required, DataType dtype)
    : operation(BuildOp(scope, "ResourceAccumulatorTakeGradient", {handle, num_required},
                        {{"dtype", dtype}})),
      average(operation.output(0)) {}

AccumulatorSetGlobalStep::AccumulatorSetGlobalStep(const Scope& scope, Input handle,
                                                   Input new_global_step)
    : operation(BuildOp(scope, "ResourceAccumulatorSetGlobalStep", {handle, new_global_step})) {}

AccumulatorNumAccumulated::AccumulatorNumAccumulated(const Scope& scope, Input handle)
    : operation(BuildOp(scope, "ResourceAccumulatorNumAccumulated", {handle})),
      num_accumulated(operation.output(0)) {}

}  // namespace ops
}  // namespace distflow
