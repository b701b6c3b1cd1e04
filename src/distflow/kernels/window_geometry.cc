#include "distflow/kernels/window_geometry.h"

#include <vector>

#include "distflow/core/status.h"

namespace distflow {
namespace {

absl::Status FourEntries(OpKernelConstruction* ctx, const char* attr,
                         const std::vector<int32_t>& v) {
  if (v.size() != 4) {
    return errors::InvalidArgument("node '", ctx->name(), "': ", attr,
                                   " must have 4 entries (NHWC), got ", v.size());
  }
  if (v[0] != 1 || v[3] != 1) {
    return errors::Unimplemented("node '", ctx->name(), "': ", attr,
                                 " over the batch or depth dimension (", v[0], ", ", v[3],
                                 ") is not supported");
  }
  if (v[1] < 1 || v[2] < 1) {
    return errors::InvalidArgument("node '", ctx->name(), "': ", attr,
                                   " entries must be positive, got ", v[1], ", ", v[2]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadWindowAttrs(OpKernelConstruction* ctx, bool pooling, WindowAttrs* out) {
  std::vector<int32_t> strides;
  DF_RETURN_IF_ERROR(ctx->GetAttr("strides", &strides));
  DF_RETURN_IF_ERROR(FourEntries(ctx, "strides", strides));
  out->stride_rows = strides[1];
  out->stride_cols = strides[2];
  if (pooling) {
    std::vector<int32_t> ksize;
    DF_RETURN_IF_ERROR(ctx->GetAttr("ksize", &ksize));
    DF_RETURN_IF_ERROR(FourEntries(ctx, "ksize", ksize));
    out->window_rows = ksize[1];
    out->window_cols = ksize[2];
  }
  std::string padding, data_format;
  DF_RETURN_IF_ERROR(ctx->GetAttr("padding", &padding));
  DF_RETURN_IF_ERROR(ctx->GetAttr("data_format", &data_format));
  if (padding != "SAME" && padding != "VALID") {
    return errors::Unimplemented("node '", ctx->name(), "': padding '", padding,
                                 "' is not supported (SAME or VALID)");
  }
  out->same = padding == "SAME";
  if (data_format != "NHWC") {
    return errors::Unimplemented("node '", ctx->name(), "': data_format '", data_format,
                                 "' is not supported on CPU (use NHWC)");
  }
  if (ctx->HasAttr("dilations")) {
    std::vector<int32_t> dilations;
    DF_RETURN_IF_ERROR(ctx->GetAttr("dilations", &dilations));
    for (int32_t d : dilations) {
      if (d != 1) {
        return errors::Unimplemented("node '", ctx->name(),
                                     "': dilations other than 1 are not supported");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ComputeWindowGeometry(const std::string& node, const TensorShape& input_shape,
                                   const WindowAttrs& attrs, int64_t window_rows,
                                   int64_t window_cols, WindowGeometry* out) {
  if (input_shape.dims() != 4) {
    return errors::InvalidArgument("node '", node, "': input must be 4-D NHWC, got shape ",
                                   input_shape.DebugString());
  }
  if (window_rows < 1 || window_cols < 1) {
    return errors::InvalidArgument("node '", node, "': the window must be at least 1x1, got ",
                                   window_rows, "x", window_cols);
  }
  WindowGeometry g;
  g.batch = input_shape.dim_size(0);
  g.in_rows = input_shape.dim_size(1);
  g.in_cols = input_shape.dim_size(2);
  g.depth = input_shape.dim_size(3);
  g.window_rows = window_rows;
  g.window_cols = window_cols;
  g.stride_rows = attrs.stride_rows;
  g.stride_cols = attrs.stride_cols;
  auto dim = [&](int64_t in, int64_t window, int64_t stride, int64_t* out_size,
                 int64_t* pad_before) -> absl::Status {
    if (attrs.same) {
      *out_size = (in + stride - 1) / stride;
      const int64_t needed = (*out_size - 1) * stride + window - in;
      *pad_before = needed > 0 ? needed / 2 : 0;
      return absl::OkStatus();
    }
    if (window > in) {
      return errors::InvalidArgument("node '", node, "': a window of ", window,
                                     " does not fit an input of ", in, " with VALID padding");
    }
    *out_size = (in - window) / stride + 1;
    *pad_before = 0;
    return absl::OkStatus();
  };
  DF_RETURN_IF_ERROR(dim(g.in_rows, window_rows, g.stride_rows, &g.out_rows, &g.pad_top));
  DF_RETURN_IF_ERROR(dim(g.in_cols, window_cols, g.stride_cols, &g.out_cols, &g.pad_left));
  *out = g;
  return absl::OkStatus();
}

}  // namespace distflow
