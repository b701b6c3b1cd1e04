// Kernel for GatherV2 (with batch_dims). Indices are validated first; then
// each gathered slice of params (the dims after axis) moves as one block.
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "distflow/framework/array_shapes.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/array_kernel_util.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

// "[1,2]": the position of flat element `i` in a tensor of `shape`.
std::string IndexString(const TensorShape& shape, int64_t i) {
  DimVector pos(shape.dims());
  for (int d = shape.dims() - 1; d >= 0; --d) {
    pos[d] = i % shape.dim_size(d);
    i /= shape.dim_size(d);
  }
  return absl::StrCat("[", absl::StrJoin(pos, ","), "]");
}

template <typename Index>
void ReadIndices(const Tensor& t, std::vector<int64_t>* out) {
  for (Index v : t.flat<Index>()) out->push_back(v);
}

class GatherV2Op : public OpKernel {
 public:
  explicit GatherV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("batch_dims", &batch_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    int64_t axis;
    OP_REQUIRES_OK(ctx, IndexScalar(ctx->input(2), "GatherV2 axis", &axis));
    PartialTensorShape computed;
    int a = 0, b = 0;
    OP_REQUIRES_OK(ctx, GatherOutputShape(params.shape(), indices.shape(), axis, batch_dims_,
                                          &computed, &a, &b));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ExactShape(computed, &shape));

    std::vector<int64_t> ix;
    ix.reserve(indices.NumElements());
    switch (indices.dtype()) {
      case DT_INT16:
        ReadIndices<int16_t>(indices, &ix);
        break;
      case DT_INT32:
        ReadIndices<int32_t>(indices, &ix);
        break;
      case DT_INT64:
        ReadIndices<int64_t>(indices, &ix);
        break;
      default:
        ctx->SetStatus(
            errors::InvalidArgument("GatherV2 indices must be int16, int32 or int64, got ",
                                    DataTypeString(indices.dtype())));
        return;
    }
    const int64_t limit = params.dim_size(a);
    for (size_t i = 0; i < ix.size(); ++i) {
      OP_REQUIRES(
          ctx, ix[i] >= 0 && ix[i] < limit,
          errors::InvalidArgument("GatherV2 indices", IndexString(indices.shape(), i), " = ", ix[i],
                                  " is not in [0, ", limit, ") (params dimension ", a, " of shape ",
                                  params.shape().DebugString(), ")"));
    }

    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (shape.num_elements() == 0) return;
    int64_t batch = 1, outer = 1, inner = 1;
    for (int d = 0; d < b; ++d) batch *= params.dim_size(d);
    for (int d = b; d < a; ++d) outer *= params.dim_size(d);
    for (int d = a + 1; d < params.dims(); ++d) inner *= params.dim_size(d);
    const int64_t n = static_cast<int64_t>(ix.size()) / batch;
    GatherRows(params.dtype(), params.raw_data(), batch, outer, limit, inner, ix.data(), n,
               out->raw_data());
  }

 private:
  int64_t batch_dims_;
};

REGISTER_KERNEL_BUILDER(
    Name("GatherV2").Device(kDeviceCpu).TypeConstraint("Tparams", ArrayKernelTypes()), GatherV2Op);

}  // namespace
}  // namespace distflow
