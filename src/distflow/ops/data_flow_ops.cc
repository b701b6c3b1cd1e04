// Ops that move data between steps and between replicas, for synchronous
// replicated training: FIFO queues (FIFOQueueV2 and the QueueXxxV2 ops on
// its DT_RESOURCE handle) and conditional accumulators, both in TensorFlow 1
// form (ConditionalAccumulator with a Ref(string) handle holding
// [container, name], Accumulator*) and in resource form
// (ResourceConditionalAccumulator, ResourceAccumulator*). Names, inputs,
// outputs and attrs follow TensorFlow's. Every op is stateful.
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

absl::Status HandleAndNoOutputs(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  return NoOutputs(c);
}

absl::Status HandleAndScalarOutput(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  return ScalarShape(c);
}

absl::Status DequeueShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  return UnknownShape(c);
}

absl::Status DequeueManyShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  DF_RETURN_IF_ERROR(c->WithScalar(1));
  return UnknownShape(c);
}

// The TensorFlow 1 accumulator handle: a string vector [container, name].
absl::Status AccumulatorRefHandleShape(InferenceContext* c) {
  c->set_output(0, PartialTensorShape({2}));
  return absl::OkStatus();
}

// Checks handle input 0 (a [2] string ref or a resource scalar).
absl::Status AccumulatorHandle(InferenceContext* c) {
  if (c->input_type(0) == DT_RESOURCE) return c->WithScalar(0);
  return c->WithRank(0, 1, nullptr);
}

absl::Status ApplyGradientShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(AccumulatorHandle(c));
  DF_RETURN_IF_ERROR(c->WithScalar(1));
  return NoOutputs(c);
}

// The accumulator's shape is not known from its handle.
absl::Status TakeGradientShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(AccumulatorHandle(c));
  DF_RETURN_IF_ERROR(c->WithScalar(1));
  return UnknownShape(c);
}

absl::Status NumAccumulatedShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(AccumulatorHandle(c));
  return ScalarShape(c);
}

absl::Status SetGlobalStepShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(AccumulatorHandle(c));
  DF_RETURN_IF_ERROR(c->WithScalar(1));
  return NoOutputs(c);
}

}  // namespace

REGISTER_OP("FIFOQueueV2")
    .Output("handle: resource")
    .Attr("component_types: list(type) >= 1")
    .Attr("shapes: list(shape) >= 0 = []")
    .Attr("capacity: int = -1")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc(
        "A first-in first-out queue of tuples of tensors, at most capacity "
        "(-1: unbounded) elements, shared by shared_name (empty: the node's "
        "name) in container.");

REGISTER_OP("QueueEnqueueV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(HandleAndNoOutputs)
    .Doc("Adds one element; waits while the queue is full.");

REGISTER_OP("QueueEnqueueManyV2")
    .Input("handle: resource")
    .Input("components: Tcomponents")
    .Attr("Tcomponents: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(HandleAndNoOutputs)
    .Doc(
        "Adds the elements the components hold along dimension 0; waits while "
        "the queue is full.");

REGISTER_OP("QueueDequeueV2")
    .Input("handle: resource")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(DequeueShape)
    .Doc(
        "Removes one element; waits while the queue is empty. OutOfRange once "
        "the queue is closed and empty.");

REGISTER_OP("QueueDequeueManyV2")
    .Input("handle: resource")
    .Input("n: int32")
    .Output("components: component_types")
    .Attr("component_types: list(type) >= 1")
    .Attr("timeout_ms: int = -1")
    .SetIsStateful()
    .SetShapeFn(DequeueManyShape)
    .Doc(
        "Removes n elements, stacked along a new dimension 0; waits until "
        "there are enough. OutOfRange once the queue is closed with fewer.");

REGISTER_OP("QueueCloseV2")
    .Input("handle: resource")
    .Attr("cancel_pending_enqueues: bool = false")
    .SetIsStateful()
    .SetShapeFn(HandleAndNoOutputs)
    .Doc(
        "Closes the queue: later enqueues fail, and so do pending ones when "
        "cancel_pending_enqueues.");

REGISTER_OP("QueueSizeV2")
    .Input("handle: resource")
    .Output("size: int32")
    .SetIsStateful()
    .SetShapeFn(HandleAndScalarOutput)
    .Doc("The number of elements in the queue.");

REGISTER_OP("ConditionalAccumulator")
    .Output("handle: Ref(string)")
    .Attr("dtype: numbertypes")
    .Attr("shape: shape")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("reduction_type: {'MEAN', 'SUM'} = 'MEAN'")
    .SetIsStateful()
    .SetShapeFn(AccumulatorRefHandleShape)
    .Doc(
        "An accumulator of gradients that drops those computed for a stale "
        "step; the handle is [container, name].");

REGISTER_OP("ResourceConditionalAccumulator")
    .Output("handle: resource")
    .Attr("dtype: numbertypes")
    .Attr("shape: shape")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("reduction_type: {'MEAN', 'SUM'} = 'MEAN'")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc(
        "An accumulator of gradients that drops those computed for a stale "
        "step.");

REGISTER_OP("AccumulatorApplyGradient")
    .Input("handle: Ref(string)")
    .Input("local_step: int64")
    .Input("gradient: dtype")
    .Attr("dtype: numbertypes")
    .SetIsStateful()
    .SetShapeFn(ApplyGradientShape)
    .Doc("Adds gradient unless local_step is older than the global step.");

REGISTER_OP("ResourceAccumulatorApplyGradient")
    .Input("handle: resource")
    .Input("local_step: int64")
    .Input("gradient: dtype")
    .Attr("dtype: numbertypes")
    .SetIsStateful()
    .SetShapeFn(ApplyGradientShape)
    .Doc("Adds gradient unless local_step is older than the global step.");

REGISTER_OP("AccumulatorTakeGradient")
    .Input("handle: Ref(string)")
    .Input("num_required: int32")
    .Output("average: dtype")
    .Attr("dtype: numbertypes")
    .SetIsStateful()
    .SetShapeFn(TakeGradientShape)
    .Doc(
        "Waits for num_required gradients, returns their mean (or sum), "
        "clears the accumulator and increments its global step.");

REGISTER_OP("ResourceAccumulatorTakeGradient")
    .Input("handle: resource")
    .Input("num_required: int32")
    .Output("average: dtype")
    .Attr("dtype: numbertypes")
    .SetIsStateful()
    .SetShapeFn(TakeGradientShape)
    .Doc(
        "Waits for num_required gradients, returns their mean (or sum), "
        "clears the accumulator and increments its global step.");

REGISTER_OP("AccumulatorNumAccumulated")
    .Input("handle: Ref(string)")
    .Output("num_accumulated: int32")
    .SetIsStateful()
    .SetShapeFn(NumAccumulatedShape)
    .Doc("The number of gradients accumulated since the last take.");

REGISTER_OP("ResourceAccumulatorNumAccumulated")
    .Input("handle: resource")
    .Output("num_accumulated: int32")
    .SetIsStateful()
    .SetShapeFn(NumAccumulatedShape)
    .Doc("The number of gradients accumulated since the last take.");

REGISTER_OP("AccumulatorSetGlobalStep")
    .Input("handle: Ref(string)")
    .Input("new_global_step: int64")
    .SetIsStateful()
    .SetShapeFn(SetGlobalStepShape)
    .Doc("Sets the accumulator's global step.");

REGISTER_OP("ResourceAccumulatorSetGlobalStep")
    .Input("handle: resource")
    .Input("new_global_step: int64")
    .SetIsStateful()
    .SetShapeFn(SetGlobalStepShape)
    .Doc("Sets the accumulator's global step.");

}  // namespace distflow
