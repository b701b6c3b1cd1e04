// Kernel for SparseToDense: the output starts as default_value everywhere
// and each row of sparse_indices (its coordinates; a vector of indices for a
// 1-D output, a scalar for one entry) receives its value. Coordinates outside
// the output are InvalidArgument; with validate_indices they must also be
// strictly increasing in row-major order (sorted, no repeats), as in
// TensorFlow.
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

class SparseToDenseOp : public OpKernel {
 public:
  explicit SparseToDenseOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_indices", &validate_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(2);
    const Tensor& fill = ctx->input(3);
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, IndexVector(ctx->input(1), "SparseToDense output_shape", &dims));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::BuildTensorShape(dims, &shape));
    OP_REQUIRES(ctx, indices.dims() <= 2,
                errors::InvalidArgument("SparseToDense sparse_indices must have rank <= 2, got ",
                                        indices.shape().DebugString()));
    // n rows of `rank` coordinates.
    const int64_t n = indices.dims() == 0 ? 1 : indices.dim_size(0);
    const int64_t rank = indices.dims() == 2 ? indices.dim_size(1) : 1;
    OP_REQUIRES(ctx, rank == shape.dims(),
                errors::InvalidArgument("SparseToDense sparse_indices rows have ", rank,
                                        " coordinates but output_shape has rank ", shape.dims()));
    OP_REQUIRES(ctx, values.dims() == 0 || (values.dims() == 1 && values.dim_size(0) == n),
                errors::InvalidArgument("SparseToDense sparse_values must be a scalar or hold ", n,
                                        " values, got shape ", values.shape().DebugString()));
    OP_REQUIRES(ctx, fill.dims() == 0,
                errors::InvalidArgument("SparseToDense default_value must be a scalar"));
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    const DataType dtype = out->dtype();
    FillElements(dtype, fill.raw_data(), shape.num_elements(), out->raw_data());
    const DimVector strides = RowMajorStrides(shape);
    int64_t previous = -1;
    for (int64_t i = 0; i < n; ++i) {
      int64_t offset = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t at = indices.dtype() == DT_INT32 ? indices.flat<int32_t>()[i * rank + d]
                                                       : indices.flat<int64_t>()[i * rank + d];
        OP_REQUIRES(ctx, at >= 0 && at < shape.dim_size(static_cast<int>(d)),
                    errors::InvalidArgument("SparseToDense index row ", i, " is out of bounds of ",
                                            shape.DebugString()));
        offset += at * strides[d];
      }
      OP_REQUIRES(ctx, !validate_ || offset > previous,
                  errors::InvalidArgument(
                      "SparseToDense index row ", i,
                      offset == previous ? " repeats the one before it" : " is out of order"));
      previous = offset;
      CopyElements(dtype, ElementAt(values, values.dims() == 0 ? 0 : i), 1,
                   ElementAt(*out, offset));
    }
  }

 private:
  bool validate_ = true;
};

REGISTER_KERNEL_BUILDER(Name("SparseToDense").Device(kDeviceCpu), SparseToDenseOp);

}  // namespace
}  // namespace distflow
