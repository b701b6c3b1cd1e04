#include "distflow/kernels/array_kernel_util.h"

#include <cstdint>

#include "distflow/core/status.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {
namespace {

// The alignment of the buffers Tensor allocates.
constexpr uintptr_t kTensorAlignment = 64;

absl::Status ReadIndices(const Tensor& t, absl::string_view name, std::vector<int64_t>* out) {
  out->clear();
  if (t.dtype() == DT_INT32) {
    for (int32_t v : t.flat<int32_t>()) out->push_back(v);
  } else if (t.dtype() == DT_INT64) {
    for (int64_t v : t.flat<int64_t>()) out->push_back(v);
  } else {
    return errors::InvalidArgument(name, " must be int32 or int64, got ",
                                   DataTypeString(t.dtype()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status IndexVector(const Tensor& t, absl::string_view name, std::vector<int64_t>* out) {
  if (t.dims() != 1) {
    return errors::InvalidArgument(name, " must be a 1-D tensor, got shape ",
                                   t.shape().DebugString());
  }
  return ReadIndices(t, name, out);
}

absl::Status IndexScalar(const Tensor& t, absl::string_view name, int64_t* out) {
  if (t.dims() != 0) {
    return errors::InvalidArgument(name, " must be a scalar, got shape ", t.shape().DebugString());
  }
  std::vector<int64_t> v;
  DF_RETURN_IF_ERROR(ReadIndices(t, name, &v));
  *out = v[0];
  return absl::OkStatus();
}

absl::Status ExactShape(const PartialTensorShape& shape, TensorShape* out) {
  if (!shape.IsFullyDefined()) {
    return errors::Internal("array kernel computed an inexact output shape ", shape.DebugString());
  }
  return TensorShape::BuildTensorShape(shape.dim_sizes(), out);
}

DimVector RowMajorStrides(const TensorShape& shape) {
  DimVector strides(shape.dims());
  int64_t s = 1;
  for (int d = shape.dims() - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape.dim_size(d);
  }
  return strides;
}

void SetFlatRangeOutput(OpKernelContext* ctx, int index, const Tensor& input, int64_t start,
                        const TensorShape& shape) {
  const int64_t n = shape.num_elements();
  const char* first = ElementAt(input, start);
  if (n > 0 && reinterpret_cast<uintptr_t>(first) % kTensorAlignment == 0) {
    Tensor flat, view;
    DF_CHECK(flat.CopyFrom(input, TensorShape({input.NumElements()})));
    DF_CHECK(view.CopyFrom(flat.Slice(start, start + n), shape));
    ctx->set_output(index, view);
    return;
  }
  Tensor* out;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(index, shape, &out));
  CopyElements(input.dtype(), first, n, out->raw_data());
}

void SetStridedBoxOutput(OpKernelContext* ctx, int index, const Tensor& input,
                         absl::Span<const int64_t> begin, absl::Span<const int64_t> stride,
                         absl::Span<const int64_t> size, const TensorShape& out_shape) {
  const int rank = input.dims();
  if (out_shape.num_elements() == 0) {
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(index, out_shape, &out));
    return;
  }
  const DimVector in_strides = RowMajorStrides(input.shape());
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) offset += begin[d] * in_strides[d];
  // The box is contiguous when it is whole trailing dims, then one range with
  // stride 1, then dims of size 1.
  int d = rank - 1;
  while (d >= 0 && begin[d] == 0 && size[d] == input.dim_size(d) &&
         (stride[d] == 1 || size[d] == 1)) {
    --d;
  }
  if (d >= 0 && (stride[d] == 1 || size[d] == 1)) --d;
  while (d >= 0 && size[d] == 1) --d;
  if (d < 0) {
    SetFlatRangeOutput(ctx, index, input, offset, out_shape);
    return;
  }
  DimVector src_strides(rank);
  for (int k = 0; k < rank; ++k) src_strides[k] = stride[k] * in_strides[k];
  Tensor* out;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(index, out_shape, &out));
  StridedCopy(input.dtype(), ElementAt(input, offset), size, src_strides, out->raw_data());
}

std::vector<DataType> ArrayKernelTypes() {
  DataTypeSlice all = AllTypes();
  return std::vector<DataType>(all.begin(), all.end());
}

}  // namespace distflow
