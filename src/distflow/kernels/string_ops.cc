// Kernels for StringJoin and ShardedFilename (ops/string_ops.cc).
#include <string>

#include "absl/strings/str_format.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

class StringJoinOp : public OpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("separator", &separator_));
  }

  void Compute(OpKernelContext* ctx) override {
    TensorShape shape;  // of the non-scalar inputs; scalars broadcast
    bool has_shape = false;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& in = ctx->input(i);
      if (in.dims() == 0) continue;
      OP_REQUIRES(ctx, !has_shape || in.shape() == shape,
                  errors::InvalidArgument("StringJoin input ", i, " has shape ",
                                          in.shape().DebugString(), " but an earlier one has ",
                                          shape.DebugString(), "; only scalars broadcast"));
      shape = in.shape();
      has_shape = true;
    }
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    auto joined = out->flat<std::string>();
    for (int64_t e = 0; e < out->NumElements(); ++e) {
      std::string& s = joined[e];
      for (int i = 0; i < ctx->num_inputs(); ++i) {
        const Tensor& in = ctx->input(i);
        if (i > 0) s += separator_;
        s += in.flat<std::string>()[in.dims() == 0 ? 0 : e];
      }
    }
  }

 private:
  std::string separator_;
};

REGISTER_KERNEL_BUILDER(Name("StringJoin").Device(kDeviceCpu), StringJoinOp);

class ShardedFilenameOp : public OpKernel {
 public:
  explicit ShardedFilenameOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < 3; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).dims() == 0,
                  errors::InvalidArgument("ShardedFilename input ", i, " must be a scalar, got ",
                                          ctx->input(i).shape().DebugString()));
    }
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->scalar<std::string>() =
        absl::StrFormat("%s-%05d-of-%05d", ctx->input(0).scalar<std::string>(),
                        ctx->input(1).scalar<int32_t>(), ctx->input(2).scalar<int32_t>());
  }
};

REGISTER_KERNEL_BUILDER(Name("ShardedFilename").Device(kDeviceCpu), ShardedFilenameOp);

}  // namespace
}  // namespace distflow
