// Kernel for GatherNd: each index tuple of K entries picks the slice
// params[i0, ..., iK-1, ...]; the slices are copied in order. An index
// outside params is InvalidArgument naming the tuple.
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class GatherNdOp : public OpKernel {
 public:
  explicit GatherNdOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    OP_REQUIRES(ctx, indices.dims() >= 1,
                errors::InvalidArgument("GatherNd indices must have rank >= 1, got ",
                                        indices.shape().DebugString()));
    const int64_t k = indices.dim_size(indices.dims() - 1);
    OP_REQUIRES(
        ctx, k <= params.dims(),
        errors::InvalidArgument("GatherNd index tuples have ", k, " entries but params has shape ",
                                params.shape().DebugString()));
    TensorShape shape;
    int64_t n = 1;  // index tuples
    for (int d = 0; d + 1 < indices.dims(); ++d) {
      OP_REQUIRES_OK(ctx, shape.AddDimWithStatus(indices.dim_size(d)));
      n *= indices.dim_size(d);
    }
    int64_t slice = 1;  // elements per tuple
    for (int d = static_cast<int>(k); d < params.dims(); ++d) {
      OP_REQUIRES_OK(ctx, shape.AddDimWithStatus(params.dim_size(d)));
      slice *= params.dim_size(d);
    }
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;
    const DimVector strides = RowMajorStrides(params.shape());
    std::vector<int64_t> tuple(k);
    for (int64_t i = 0; i < n; ++i) {
      int64_t offset = 0;
      for (int64_t j = 0; j < k; ++j) {
        tuple[j] = indices.dtype() == DT_INT32 ? indices.flat<int32_t>()[i * k + j]
                                               : indices.flat<int64_t>()[i * k + j];
        OP_REQUIRES(ctx, tuple[j] >= 0 && tuple[j] < params.dim_size(static_cast<int>(j)),
                    errors::InvalidArgument(
                        "GatherNd index [", absl::StrJoin(tuple, ", "), "] (tuple ", i,
                        ") does not index into params of shape ", params.shape().DebugString()));
        offset += tuple[j] * strides[j];
      }
      CopyElements(params.dtype(), ElementAt(params, offset), slice, ElementAt(*out, i * slice));
    }
  }
};

REGISTER_KERNEL_BUILDER(Name("GatherNd").Device(kDeviceCpu), GatherNdOp);

}  // namespace
}  // namespace distflow
