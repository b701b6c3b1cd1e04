// Kernel for MatMul: product = op(a) * op(b) with op transposing when
// transpose_a / transpose_b is set. Both inputs must be matrices whose inner
// dimensions agree.
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/matmul.h"

namespace distflow {
namespace {

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("transpose_a", &transpose_a_));
    ctx->SetStatus(ctx->GetAttr("transpose_b", &transpose_b_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    OP_REQUIRES(ctx, a.dims() == 2,
                errors::InvalidArgument("In[0] is not a matrix: shape ", a.shape().DebugString()));
    OP_REQUIRES(ctx, b.dims() == 2,
                errors::InvalidArgument("In[1] is not a matrix: shape ", b.shape().DebugString()));
    const int64_t m = a.dim_size(transpose_a_ ? 1 : 0);
    const int64_t k = a.dim_size(transpose_a_ ? 0 : 1);
    const int64_t k_b = b.dim_size(transpose_b_ ? 1 : 0);
    const int64_t n = b.dim_size(transpose_b_ ? 0 : 1);
    OP_REQUIRES(ctx, k == k_b,
                errors::InvalidArgument("Matrix size-incompatible: inner dimensions must agree: ",
                                        a.shape().DebugString(), " vs ", b.shape().DebugString(),
                                        " (transpose_a=", transpose_a_,
                                        ", transpose_b=", transpose_b_, ")"));
    TensorShape out_shape;
    OP_REQUIRES_OK(ctx, TensorShape::BuildTensorShape({m, n}, &out_shape));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    MatMulRowMajor<T>(ctx->intra_op_threadpool(), a.base<T>(), transpose_a_, b.base<T>(),
                      transpose_b_, m, k, n, out->base<T>());
  }

 private:
  bool transpose_a_ = false, transpose_b_ = false;
};

#define DF_REGISTER_MATMUL(T) \
  REGISTER_KERNEL_BUILDER(Name("MatMul").Device(kDeviceCpu).TypeConstraint<T>("T"), MatMulOp<T>)
DF_REGISTER_MATMUL(float);
DF_REGISTER_MATMUL(double);
DF_REGISTER_MATMUL(int32_t);
DF_REGISTER_MATMUL(int64_t);
DF_REGISTER_MATMUL(bfloat16);
#undef DF_REGISTER_MATMUL

}  // namespace
}  // namespace distflow
