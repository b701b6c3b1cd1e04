// Kernel for UnsortedSegmentSum: output[i, ...] is the sum of the rows of
// data whose segment id is i. Rows with a negative id are dropped (as in
// TensorFlow); an id >= num_segments is InvalidArgument naming its position.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"

namespace distflow {
namespace {

template <typename T, typename Index>
class UnsortedSegmentSumOp : public OpKernel {
 public:
  explicit UnsortedSegmentSumOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    int64_t num_segments;
    OP_REQUIRES_OK(ctx,
                   IndexScalar(ctx->input(2), "UnsortedSegmentSum num_segments", &num_segments));
    OP_REQUIRES(ctx, num_segments >= 0,
                errors::InvalidArgument("UnsortedSegmentSum num_segments must be non-negative, "
                                        "got ",
                                        num_segments));
    bool prefix = ids.dims() <= data.dims();
    for (int d = 0; prefix && d < ids.dims(); ++d) {
      prefix = ids.dim_size(d) == data.dim_size(d);
    }
    OP_REQUIRES(
        ctx, prefix,
        errors::InvalidArgument("UnsortedSegmentSum segment_ids shape ", ids.shape().DebugString(),
                                " is not a prefix of data shape ", data.shape().DebugString()));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, shape.AddDimWithStatus(num_segments));
    for (int d = ids.dims(); d < data.dims(); ++d) {
      OP_REQUIRES_OK(ctx, shape.AddDimWithStatus(data.dim_size(d)));
    }
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    T* dst = out->base<T>();
    std::fill(dst, dst + out->NumElements(), T(0));
    const int64_t rows = ids.NumElements();
    if (rows == 0) return;
    const int64_t inner = data.NumElements() / rows;
    const T* src = data.base<T>();
    const Index* id = ids.base<Index>();
    for (int64_t r = 0; r < rows; ++r) {
      if (id[r] < 0) continue;
      OP_REQUIRES(ctx, id[r] < num_segments,
                  errors::InvalidArgument("UnsortedSegmentSum segment_ids[", r, "] = ", id[r],
                                          " is not in [0, num_segments = ", num_segments, ")"));
      T* row = dst + id[r] * inner;
      const T* in = src + r * inner;
      for (int64_t i = 0; i < inner; ++i) row[i] += in[i];
    }
  }
};

#define DF_REGISTER_SEGMENT_SUM(T, Index)                         \
  REGISTER_KERNEL_BUILDER(Name("UnsortedSegmentSum")              \
                              .Device(kDeviceCpu)                 \
                              .TypeConstraint<T>("T")             \
                              .TypeConstraint<Index>("Tindices"), \
                          UnsortedSegmentSumOp<T, Index>)
#define DF_REGISTER_SEGMENT_SUM_TYPE(T) \
  DF_REGISTER_SEGMENT_SUM(T, int32_t);  \
  DF_REGISTER_SEGMENT_SUM(T, int64_t)

DF_REGISTER_SEGMENT_SUM_TYPE(float);
DF_REGISTER_SEGMENT_SUM_TYPE(double);
DF_REGISTER_SEGMENT_SUM_TYPE(bfloat16);
DF_REGISTER_SEGMENT_SUM_TYPE(int32_t);
DF_REGISTER_SEGMENT_SUM_TYPE(int64_t);

#undef DF_REGISTER_SEGMENT_SUM_TYPE
#undef DF_REGISTER_SEGMENT_SUM

}  // namespace
}  // namespace distflow
