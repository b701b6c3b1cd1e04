// Kernels for Fill, ZerosLike and OnesLike: every output element is one
// value, written by byte copies (FillElements) rather than per-type code.
#include <cstring>
#include <string>
#include <vector>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class FillOp : public OpKernel {
 public:
  explicit FillOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(0), "Fill dims", &dims));
    for (size_t i = 0; i < dims.size(); ++i) {
      OP_REQUIRES(
          ctx, dims[i] >= 0,
          errors::InvalidArgument("Fill dims[", i, "] = ", dims[i], " must be non-negative"));
    }
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, value.dims() == 0,
                errors::InvalidArgument("Fill value must be a scalar, got shape ",
                                        value.shape().DebugString()));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::BuildTensorShape(dims, &shape));
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    FillElements(value.dtype(), value.raw_data(), shape.num_elements(), out->raw_data());
  }
};

class ZerosLikeOp : public OpKernel {
 public:
  explicit ZerosLikeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    Tensor* out;
    if (input.dtype() == DT_STRING) {
      // Fresh string tensors hold empty strings.
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &out));
      return;
    }
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, input.shape(), &out));
    // All-zero bytes are zero, 0.0 and false in every fixed-size type.
    if (out->NumElements() > 0) std::memset(out->raw_data(), 0, out->TotalBytes());
  }
};

class OnesLikeOp : public OpKernel {
 public:
  explicit OnesLikeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    VisitDataType(ctx->input_type(0), [this](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, std::string>) {
        one_ = Tensor::Scalar<T>(static_cast<T>(1));
      }
    });
    OP_REQUIRES(ctx, one_.IsInitialized(),
                errors::InvalidArgument("OnesLike does not support type ",
                                        DataTypeString(ctx->input_type(0))));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, input.shape(), &out));
    FillElements(one_.dtype(), one_.raw_data(), out->NumElements(), out->raw_data());
  }

 private:
  Tensor one_;
};

REGISTER_KERNEL_BUILDER(Name("Fill").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()),
                        FillOp);
REGISTER_KERNEL_BUILDER(
    Name("ZerosLike").Device(kDeviceCpu).TypeConstraint("T", ArrayKernelTypes()), ZerosLikeOp);
REGISTER_KERNEL_BUILDER(Name("OnesLike").Device(kDeviceCpu), OnesLikeOp);

}  // namespace
}  // namespace distflow
