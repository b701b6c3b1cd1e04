// Kernel for BatchMatMulV2: the matrices in the last two dimensions of x and
// y are multiplied (each adjointed first when adj_x / adj_y; for real types
// that is a transpose), and the leading batch dimensions broadcast as in
// NumPy. Many small products run in parallel, one per task; few large ones
// run one after another, each split over the pool.
#include <vector>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/broadcast.h"
#include "distflow/kernels/cwise_ops.h"
#include "distflow/kernels/matmul.h"

namespace distflow {
namespace {

template <typename T>
class BatchMatMulV2Op : public OpKernel {
 public:
  explicit BatchMatMulV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("adj_x", &adj_x_));
    ctx->SetStatus(ctx->GetAttr("adj_y", &adj_y_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    OP_REQUIRES(ctx, x.dims() >= 2 && y.dims() >= 2,
                errors::InvalidArgument("x and y must have rank >= 2, got shapes ",
                                        x.shape().DebugString(), " and ", y.shape().DebugString()));
    const int rx = x.dims(), ry = y.dims();
    const int64_t m = x.dim_size(adj_x_ ? rx - 1 : rx - 2);
    const int64_t k = x.dim_size(adj_x_ ? rx - 2 : rx - 1);
    const int64_t k_y = y.dim_size(adj_y_ ? ry - 1 : ry - 2);
    const int64_t n = y.dim_size(adj_y_ ? ry - 2 : ry - 1);
    OP_REQUIRES(ctx, k == k_y,
                errors::InvalidArgument("Matrix size-incompatible: inner dimensions must agree: ",
                                        x.shape().DebugString(), " vs ", y.shape().DebugString(),
                                        " (adj_x=", adj_x_, ", adj_y=", adj_y_, ")"));
    const TensorShape batch_x(x.shape().dim_sizes().subspan(0, rx - 2));
    const TensorShape batch_y(y.shape().dim_sizes().subspan(0, ry - 2));
    BroadcastPlan plan;
    OP_REQUIRES(ctx, BroadcastPlan::Make({batch_x, batch_y}, &plan).ok(),
                errors::InvalidArgument("batch dimensions are incompatible for broadcasting: ",
                                        x.shape().DebugString(), " vs ", y.shape().DebugString()));
    TensorShape out_shape = plan.output_shape();
    OP_REQUIRES_OK(ctx, out_shape.AddDimWithStatus(m));
    OP_REQUIRES_OK(ctx, out_shape.AddDimWithStatus(n));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;

    // For each output matrix, the x and y matrices it multiplies.
    const int64_t batches = plan.num_elements();
    std::vector<int64_t> x_index(batches), y_index(batches);
    const int64_t sx = plan.inner_stride(0), sy = plan.inner_stride(1);
    plan.ForEachSegment(0, batches, [&](int64_t o, const int64_t* in, int64_t len) {
      for (int64_t i = 0; i < len; ++i) {
        x_index[o + i] = in[0] + i * sx;
        y_index[o + i] = in[1] + i * sy;
      }
    });
    const T* px = x.base<T>();
    const T* py = y.base<T>();
    T* pout = out->base<T>();
    auto multiply = [&](ThreadPool* pool, int64_t i) {
      MatMulRowMajor<T>(pool, px + x_index[i] * m * k, adj_x_, py + y_index[i] * k * n, adj_y_, m,
                        k, n, pout + i * m * n);
    };
    ThreadPool* pool = ctx->intra_op_threadpool();
    const int64_t flops = 2 * m * n * k;
    if (pool != nullptr && batches < pool->NumThreads() && flops >= (int64_t{1} << 22)) {
      for (int64_t i = 0; i < batches; ++i) multiply(pool, i);
      return;
    }
    ShardElementwise(ctx, batches, flops, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) multiply(nullptr, i);
    });
  }

 private:
  bool adj_x_ = false, adj_y_ = false;
};

#define DF_REGISTER_BATCH_MATMUL(T)                                                        \
  REGISTER_KERNEL_BUILDER(Name("BatchMatMulV2").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                          BatchMatMulV2Op<T>)
DF_REGISTER_BATCH_MATMUL(float);
DF_REGISTER_BATCH_MATMUL(double);
DF_REGISTER_BATCH_MATMUL(int32_t);
DF_REGISTER_BATCH_MATMUL(int64_t);
DF_REGISTER_BATCH_MATMUL(bfloat16);
#undef DF_REGISTER_BATCH_MATMUL

}  // namespace
}  // namespace distflow
