// Kernels for Shape, Size and Rank: they read only the input's shape.
#include <limits>

#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

// Stores `value` in `*out` as output type T, failing when it does not fit.
template <typename T>
absl::Status StoreIndex(int64_t value, absl::string_view what, T* out) {
  if (value > std::numeric_limits<T>::max()) {
    return errors::InvalidArgument(what, " ", value, " does not fit in int32; use out_type int64");
  }
  *out = static_cast<T>(value);
  return absl::OkStatus();
}

template <typename T>
class ShapeOp : public OpKernel {
 public:
  explicit ShapeOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    const TensorShape& shape = ctx->input(0).shape();
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({shape.dims()}), &out));
    T* dims = out->base<T>();
    for (int d = 0; d < shape.dims(); ++d) {
      OP_REQUIRES_OK(
          ctx, StoreIndex(shape.dim_size(d), absl::StrCat("dimension ", d, " of size"), &dims[d]));
    }
  }
};

template <typename T>
class SizeOp : public OpKernel {
 public:
  explicit SizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    OP_REQUIRES_OK(ctx,
                   StoreIndex(ctx->input(0).NumElements(), "element count", &out->scalar<T>()));
  }
};

class RankOp : public OpKernel {
 public:
  explicit RankOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, Tensor::Scalar<int32_t>(ctx->input(0).dims()));
  }
};

REGISTER_KERNEL_BUILDER(Name("Shape").Device(kDeviceCpu).TypeConstraint<int32_t>("out_type"),
                        ShapeOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("Shape").Device(kDeviceCpu).TypeConstraint<int64_t>("out_type"),
                        ShapeOp<int64_t>);
REGISTER_KERNEL_BUILDER(Name("Size").Device(kDeviceCpu).TypeConstraint<int32_t>("out_type"),
                        SizeOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("Size").Device(kDeviceCpu).TypeConstraint<int64_t>("out_type"),
                        SizeOp<int64_t>);
REGISTER_KERNEL_BUILDER(Name("Rank").Device(kDeviceCpu), RankOp);

}  // namespace
}  // namespace distflow
