// Kernels for ArgMax and ArgMin: the index along `dimension` of the largest
// (smallest) value, the first one on ties. The dimension is a scalar in
// [-rank, rank) and must not be empty.
#include <vector>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/cwise_ops.h"

namespace distflow {
namespace {

struct GreaterFn {
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return a > b;
  }
};
struct LessFn {
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return a < b;
  }
};

// `Better(a, b)` is true when a should replace the current best b.
template <typename T, typename Out, typename Better>
class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& dimension = ctx->input(1);
    OP_REQUIRES(ctx, dimension.dims() == 0,
                errors::InvalidArgument("dimension must be a scalar, got shape ",
                                        dimension.shape().DebugString()));
    const int64_t axis_arg =
        dimension.dtype() == DT_INT32 ? dimension.scalar<int32_t>() : dimension.scalar<int64_t>();
    const int rank = input.dims();
    OP_REQUIRES(ctx, axis_arg >= -rank && axis_arg < rank,
                errors::InvalidArgument("Expected dimension in the range [", -rank, ", ", rank,
                                        "), but got ", axis_arg));
    const int axis = static_cast<int>(axis_arg < 0 ? axis_arg + rank : axis_arg);
    const int64_t n = input.dim_size(axis);
    OP_REQUIRES(ctx, n > 0,
                errors::InvalidArgument("Reduction axis ", axis_arg, " is empty in shape ",
                                        input.shape().DebugString()));
    TensorShape out_shape = input.shape();
    out_shape.RemoveDim(axis);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &output));
    if (output->NumElements() == 0) return;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= input.dim_size(d);
    for (int d = axis + 1; d < rank; ++d) inner *= input.dim_size(d);
    const T* in = input.base<T>();
    Out* out = output->base<Out>();
    ShardElementwise(ctx, outer, n * inner, [&](int64_t begin, int64_t end) {
      const Better better;
      std::vector<T> best(inner);
      for (int64_t o = begin; o < end; ++o) {
        const T* slab = in + o * n * inner;
        Out* idx = out + o * inner;
        std::copy(slab, slab + inner, best.begin());
        std::fill(idx, idx + inner, Out(0));
        for (int64_t a = 1; a < n; ++a) {
          const T* row = slab + a * inner;
          for (int64_t j = 0; j < inner; ++j) {
            if (better(row[j], best[j])) {
              best[j] = row[j];
              idx[j] = static_cast<Out>(a);
            }
          }
        }
      }
    });
  }
};

#define DF_REGISTER_ARG_OP(name, T, Out, Better)                             \
  REGISTER_KERNEL_BUILDER(Name(name)                                         \
                              .Device(kDeviceCpu)                            \
                              .TypeConstraint<T>("T")                        \
                              .TypeConstraint<Out>("output_type")            \
                              .TypeConstraint("Tidx", {DT_INT32, DT_INT64}), \
                          ArgOp<T, Out, Better>)
#define DF_REGISTER_ARG_OPS(T)                         \
  DF_REGISTER_ARG_OP("ArgMax", T, int64_t, GreaterFn); \
  DF_REGISTER_ARG_OP("ArgMax", T, int32_t, GreaterFn); \
  DF_REGISTER_ARG_OP("ArgMin", T, int64_t, LessFn);    \
  DF_REGISTER_ARG_OP("ArgMin", T, int32_t, LessFn)

DF_REGISTER_ARG_OPS(float);
DF_REGISTER_ARG_OPS(double);
DF_REGISTER_ARG_OPS(int32_t);
DF_REGISTER_ARG_OPS(int64_t);
DF_REGISTER_ARG_OPS(bfloat16);

#undef DF_REGISTER_ARG_OPS
#undef DF_REGISTER_ARG_OP

}  // namespace
}  // namespace distflow
