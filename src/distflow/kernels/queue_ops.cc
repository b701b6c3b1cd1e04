// Kernels for FIFO queues. FIFOQueueV2 finds or creates the queue in the
// device's ResourceMgr each step and outputs its handle; enqueues and
// dequeues are asynchronous kernels that park their request with the queue
// (see kernels/fifo_queue.h) and finish through a callback, so a blocked
// dequeue holds no thread and ends with Cancelled when its step is
// cancelled.
#include <string>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/fifo_queue.h"

namespace distflow {
namespace {

class FIFOQueueOp : public OpKernel {
 public:
  explicit FIFOQueueOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("component_types", &component_types_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shapes", &shapes_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("capacity", &capacity_));
    OP_REQUIRES_OK(ctx, ResourceNameFromAttrs(ctx, &name_));
    OP_REQUIRES(ctx, shapes_.empty() || shapes_.size() == component_types_.size(),
                errors::InvalidArgument("FIFOQueueV2 has ", component_types_.size(),
                                        " component types but ", shapes_.size(), " shapes"));
    OP_REQUIRES(ctx, capacity_ != 0,
                errors::InvalidArgument("FIFOQueueV2 capacity must be positive ",
                                        "or -1 (unbounded), got 0"));
    handle_ = Tensor(DT_RESOURCE, TensorShape());
    handle_.scalar<ResourceHandle>() =
        MakeResourceHandle<FIFOQueue>(ctx->device(), name_.container, name_.name);
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceMgr*> rm = GetResourceMgr(ctx->device());
    OP_REQUIRES_OK(ctx, rm.status());
    absl::StatusOr<RefPtr<FIFOQueue>> queue = (*rm)->LookupOrCreate<FIFOQueue>(
        name_.container, name_.name, [this]() -> absl::StatusOr<FIFOQueue*> {
          return new FIFOQueue(name_.name, component_types_, shapes_, capacity_);
        });
    OP_REQUIRES_OK(ctx, queue.status());
    OP_REQUIRES_OK(ctx, (*queue)->MatchesAttrs(component_types_, shapes_, capacity_));
    ctx->set_output(0, handle_);
  }

 private:
  DataTypeVector component_types_;
  std::vector<PartialTensorShape> shapes_;
  int64_t capacity_;
  ResourceName name_;
  Tensor handle_;
};

REGISTER_KERNEL_BUILDER(Name("FIFOQueueV2").Device(kDeviceCpu), FIFOQueueOp);

// The queue named by input 0.
absl::StatusOr<RefPtr<FIFOQueue>> QueueFromInput(OpKernelContext* ctx) {
  DF_ASSIGN_OR_RETURN(ResourceHandle handle, HandleFromInput(ctx, 0));
  return LookupResource<FIFOQueue>(ctx, handle);
}

// Queue ops with a timeout_ms attr accept only -1: steps are bounded by
// RunOptions.timeout_in_ms instead.
absl::Status CheckNoTimeout(OpKernelConstruction* ctx) {
  int64_t timeout_ms;
  DF_RETURN_IF_ERROR(ctx->GetAttr("timeout_ms", &timeout_ms));
  if (timeout_ms == -1) return absl::OkStatus();
  return errors::Unimplemented("timeout_ms ", timeout_ms,
                               " is not supported (only -1); bound the step "
                               "with RunOptions.timeout_in_ms");
}

class QueueEnqueueOp : public AsyncOpKernel {
 public:
  explicit QueueEnqueueOp(OpKernelConstruction* ctx)
      : AsyncOpKernel(ctx), many_(ctx->def().op() == "QueueEnqueueManyV2") {
    OP_REQUIRES_OK(ctx, CheckNoTimeout(ctx));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<RefPtr<FIFOQueue>> queue = QueueFromInput(ctx);
    OP_REQUIRES_OK_ASYNC(ctx, queue.status(), done);
    FIFOQueue::Tuple tuple;
    for (int i = 1; i < ctx->num_inputs(); ++i) tuple.push_back(ctx->input(i));
    OP_REQUIRES_OK_ASYNC(ctx, (*queue)->ValidateTuple(tuple, many_), done);
    auto callback = [ctx, done = std::move(done)](const absl::Status& s) {
      ctx->SetStatus(s);
      done();
    };
    if (many_) {
      (*queue)->TryEnqueueMany(tuple, ctx->cancellation_manager(), std::move(callback));
    } else {
      (*queue)->TryEnqueue(std::move(tuple), ctx->cancellation_manager(), std::move(callback));
    }
  }

 private:
  const bool many_;
};

REGISTER_KERNEL_BUILDER(Name("QueueEnqueueV2").Device(kDeviceCpu), QueueEnqueueOp);
REGISTER_KERNEL_BUILDER(Name("QueueEnqueueManyV2").Device(kDeviceCpu), QueueEnqueueOp);

class QueueDequeueOp : public AsyncOpKernel {
 public:
  explicit QueueDequeueOp(OpKernelConstruction* ctx)
      : AsyncOpKernel(ctx), many_(ctx->def().op() == "QueueDequeueManyV2") {
    OP_REQUIRES_OK(ctx, CheckNoTimeout(ctx));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("component_types", &component_types_));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<RefPtr<FIFOQueue>> queue = QueueFromInput(ctx);
    OP_REQUIRES_OK_ASYNC(ctx, queue.status(), done);
    OP_REQUIRES_OK_ASYNC(ctx, (*queue)->CheckComponentTypes(component_types_), done);
    int32_t n = 1;
    if (many_) {
      const Tensor& n_input = ctx->input(1);
      OP_REQUIRES_ASYNC(
          ctx, n_input.dims() == 0,
          errors::InvalidArgument("n must be a scalar, got shape ", n_input.shape().DebugString()),
          done);
      n = n_input.scalar<int32_t>();
      OP_REQUIRES_ASYNC(ctx, n >= 0,
                        errors::InvalidArgument("DequeueMany of queue '", (*queue)->name(),
                                                "' asks for ", n, " elements"),
                        done);
      bool specified = !(*queue)->shapes().empty();
      for (const PartialTensorShape& s : (*queue)->shapes()) {
        specified = specified && s.IsFullyDefined();
      }
      OP_REQUIRES_ASYNC(ctx, specified,
                        errors::InvalidArgument("DequeueMany of queue '", (*queue)->name(),
                                                "' requires the components to have fully "
                                                "defined shapes"),
                        done);
    }
    auto callback = [ctx, done = std::move(done)](const absl::Status& s, FIFOQueue::Tuple tuple) {
      if (s.ok()) {
        for (size_t i = 0; i < tuple.size(); ++i) {
          ctx->set_output(static_cast<int>(i), std::move(tuple[i]));
        }
      } else {
        ctx->SetStatus(s);
      }
      done();
    };
    if (many_) {
      (*queue)->TryDequeueMany(n, ctx->cancellation_manager(), std::move(callback));
    } else {
      (*queue)->TryDequeue(ctx->cancellation_manager(), std::move(callback));
    }
  }

 private:
  const bool many_;
  DataTypeVector component_types_;
};

REGISTER_KERNEL_BUILDER(Name("QueueDequeueV2").Device(kDeviceCpu), QueueDequeueOp);
REGISTER_KERNEL_BUILDER(Name("QueueDequeueManyV2").Device(kDeviceCpu), QueueDequeueOp);

class QueueCloseOp : public OpKernel {
 public:
  explicit QueueCloseOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("cancel_pending_enqueues", &cancel_pending_enqueues_));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<RefPtr<FIFOQueue>> queue = QueueFromInput(ctx);
    OP_REQUIRES_OK(ctx, queue.status());
    (*queue)->Close(cancel_pending_enqueues_);
  }

 private:
  bool cancel_pending_enqueues_;
};

REGISTER_KERNEL_BUILDER(Name("QueueCloseV2").Device(kDeviceCpu), QueueCloseOp);

class QueueSizeOp : public OpKernel {
 public:
  explicit QueueSizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<RefPtr<FIFOQueue>> queue = QueueFromInput(ctx);
    OP_REQUIRES_OK(ctx, queue.status());
    ctx->set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>((*queue)->size())));
  }
};

REGISTER_KERNEL_BUILDER(Name("QueueSizeV2").Device(kDeviceCpu), QueueSizeOp);

}  // namespace
}  // namespace distflow
