// Kernel for StridedSliceGrad: a zero tensor of the sliced input's shape with
// dy written into the box StridedSlice reads. The index spec is interpreted
// by framework/strided_slice_spec.h, the same code the forward kernel uses,
// so the two agree on every box. Elements move as bytes, so one kernel
// serves every fixed-size type.
#include <cstring>
#include <vector>

#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/strided_slice_spec.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class StridedSliceGradOp : public OpKernel {
 public:
  explicit StridedSliceGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("begin_mask", &masks_.begin_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("end_mask", &masks_.end_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ellipsis_mask", &masks_.ellipsis_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("new_axis_mask", &masks_.new_axis_mask));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shrink_axis_mask", &masks_.shrink_axis_mask));
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> dims, begin, end, strides;
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(0), "StridedSliceGrad shape", &dims));
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(1), "StridedSliceGrad begin", &begin));
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(2), "StridedSliceGrad end", &end));
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(3), "StridedSliceGrad strides", &strides));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::BuildTensorShape(dims, &shape));
    StridedSliceSpec spec;
    OP_REQUIRES_OK(ctx, ComputeStridedSlice(shape, begin, end, strides, masks_, &spec));
    const Tensor& dy = ctx->input(4);
    OP_REQUIRES(ctx, spec.final_shape.IsCompatibleWith(dy.shape()),
                errors::InvalidArgument("StridedSliceGrad dy has shape ", dy.shape().DebugString(),
                                        " but slicing ", shape.DebugString(), " gives ",
                                        spec.final_shape.DebugString()));
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (out->NumElements() > 0) std::memset(out->raw_data(), 0, out->TotalBytes());
    if (dy.NumElements() == 0) return;

    // Walk the box in row-major order (the order of dy's elements) with an
    // odometer over its dims, writing each element at its place in out.
    const DimVector row_strides = RowMajorStrides(shape);
    const int rank = shape.dims();
    std::vector<int64_t> step(rank);
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) {
      step[d] = spec.stride[d] * row_strides[d];
      offset += spec.begin[d] * row_strides[d];
    }
    const size_t bytes = ElementBytes(dy.dtype());
    const char* src = static_cast<const char*>(dy.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    std::vector<int64_t> index(rank, 0);
    for (int64_t n = dy.NumElements(); n > 0; --n) {
      std::memcpy(dst + offset * bytes, src, bytes);
      src += bytes;
      for (int d = rank - 1; d >= 0; --d) {
        offset += step[d];
        if (++index[d] < spec.size[d]) break;
        offset -= step[d] * spec.size[d];
        index[d] = 0;
      }
    }
  }

 private:
  StridedSliceMasks masks_;
};

std::vector<DataType> FixedSizeTypes() {
  std::vector<DataType> types;
  for (DataType t : AllTypes()) {
    if (t != DT_STRING) types.push_back(t);
  }
  return types;
}

REGISTER_KERNEL_BUILDER(
    Name("StridedSliceGrad").Device(kDeviceCpu).TypeConstraint("T", FixedSizeTypes()),
    StridedSliceGradOp);

}  // namespace
}  // namespace distflow
