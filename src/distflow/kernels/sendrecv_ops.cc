// Kernels for _Send and _Recv. Both build their rendezvous key from their
// attrs once, at construction, for the root frame; a node inside a loop frame
// builds the key of its (frame, iteration) per step. _Send never blocks;
// _Recv is asynchronous and finishes when the value arrives or the step's
// rendezvous is aborted or its cancellation manager cancelled.
#include <string>
#include <utility>

#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/rendezvous.h"

namespace distflow {
namespace {

// The parts of a rendezvous key a transfer node's attrs give.
struct KeyPrefix {
  std::string send_device;
  uint64_t send_device_incarnation = 0;
  std::string recv_device;
  std::string tensor_name;

  std::string Key(const FrameAndIter& frame_iter) const {
    return Rendezvous::CreateKey(send_device, send_device_incarnation, recv_device, tensor_name,
                                 frame_iter);
  }
};

absl::Status ReadKeyAttrs(OpKernelConstruction* ctx, KeyPrefix* prefix,
                          Rendezvous::ParsedKey* root_key) {
  int64_t incarnation = 0;
  DF_RETURN_IF_ERROR(ctx->GetAttr("send_device", &prefix->send_device));
  DF_RETURN_IF_ERROR(ctx->GetAttr("recv_device", &prefix->recv_device));
  DF_RETURN_IF_ERROR(ctx->GetAttr("tensor_name", &prefix->tensor_name));
  DF_RETURN_IF_ERROR(ctx->GetAttr("send_device_incarnation", &incarnation));
  prefix->send_device_incarnation = static_cast<uint64_t>(incarnation);
  return Rendezvous::ParseKey(prefix->Key(FrameAndIter()), root_key);
}

bool IsRootFrame(const FrameAndIter& f) { return f.frame_id == 0 && f.iter_id == 0; }

class SendOp : public OpKernel {
 public:
  explicit SendOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    const absl::Status s = ReadKeyAttrs(ctx, &prefix_, &root_key_);
    if (!s.ok()) ctx->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->rendezvous() != nullptr,
                errors::Internal("_Send needs a rendezvous in its context"));
    Rendezvous::Args args;
    args.device = ctx->device();
    if (IsRootFrame(ctx->frame_iter())) {
      OP_REQUIRES_OK(ctx, ctx->rendezvous()->Send(root_key_, args, ctx->input(0),
                                                  ctx->params()->is_input_dead));
      return;
    }
    Rendezvous::ParsedKey key;
    OP_REQUIRES_OK(ctx, Rendezvous::ParseKey(prefix_.Key(ctx->frame_iter()), &key));
    OP_REQUIRES_OK(ctx,
                   ctx->rendezvous()->Send(key, args, ctx->input(0), ctx->params()->is_input_dead));
  }

 private:
  KeyPrefix prefix_;
  Rendezvous::ParsedKey root_key_;
};

class RecvOp : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) {
    // Starting a receive is cheap; the wait happens off-thread.
    set_expensive(false);
    const absl::Status s = ReadKeyAttrs(ctx, &prefix_, &root_key_);
    if (!s.ok()) ctx->SetStatus(s);
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    OP_REQUIRES_ASYNC(ctx, ctx->rendezvous() != nullptr,
                      errors::Internal("_Recv needs a rendezvous in its context"), done);
    Rendezvous::Args args;
    args.device = ctx->device();
    args.cancellation_manager = ctx->cancellation_manager();
    auto on_value = [ctx, done = std::move(done)](const absl::Status& s, const Rendezvous::Args&,
                                                  const Rendezvous::Args&, const Tensor& value,
                                                  bool is_dead) {
      if (!s.ok()) {
        ctx->SetStatus(s);
      } else if (!is_dead) {
        // A dead value leaves the output unset, which the executor reads as
        // a dead output.
        ctx->set_output(0, value);
      }
      done();
    };
    if (IsRootFrame(ctx->frame_iter())) {
      ctx->rendezvous()->RecvAsync(root_key_, args, std::move(on_value));
      return;
    }
    Rendezvous::ParsedKey key;
    const absl::Status s = Rendezvous::ParseKey(prefix_.Key(ctx->frame_iter()), &key);
    if (!s.ok()) {
      on_value(s, Rendezvous::Args(), args, Tensor(), false);
      return;
    }
    ctx->rendezvous()->RecvAsync(key, args, std::move(on_value));
  }

 private:
  KeyPrefix prefix_;
  Rendezvous::ParsedKey root_key_;
};

REGISTER_KERNEL_BUILDER(Name("_Send").Device(kDeviceCpu), SendOp);
REGISTER_KERNEL_BUILDER(Name("_Recv").Device(kDeviceCpu), RecvOp);

}  // namespace
}  // namespace distflow
