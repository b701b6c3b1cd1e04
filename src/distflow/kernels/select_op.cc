// Kernels for Select (TensorFlow v1 semantics: the condition is a scalar,
// has the shape of t and e, or is a vector picking whole rows along
// dimension 0) and SelectV2 (condition, t and e broadcast together).
// Elements are moved by size, so one kernel serves every fixed-size type;
// strings are copied as strings.
#include <algorithm>
#include <string>

#include "distflow/framework/kernel_registry.h"
#include "distflow/kernels/cwise_ops.h"

namespace distflow {
namespace {

// out[i] = c[i*sc] ? t[i*st] : e[i*se] for i in [0, n), strides in {0, 1}.
template <typename E>
void SelectSegment(const bool* c, int64_t sc, const E* t, int64_t st, const E* e, int64_t se,
                   E* out, int64_t n) {
  if (sc != 0 && st != 0 && se != 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? t[i] : e[i];
  } else {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = c[i * sc] ? t[i * st] : e[i * se];
    }
  }
}

// Calls fn(E{}) with an element type of the same size as `dtype`'s elements
// (the element itself for strings); false for types with no fixed size.
template <typename Fn>
bool VisitBySize(DataType dtype, Fn&& fn) {
  if (dtype == DT_STRING) {
    fn(std::string());
    return true;
  }
  switch (DataTypeSize(dtype)) {
    case 1:
      fn(uint8_t{});
      return true;
    case 2:
      fn(uint16_t{});
      return true;
    case 4:
      fn(uint32_t{});
      return true;
    case 8:
      fn(uint64_t{});
      return true;
    default:
      return false;
  }
}

absl::Status UnsupportedType(DataType dtype) {
  return errors::Unimplemented("Select does not support type ", DataTypeString(dtype));
}

// Computes out from cond, t, e under a plan built from their three shapes.
void SelectBroadcast(OpKernelContext* ctx, const BroadcastPlan& plan, const Tensor& cond,
                     const Tensor& t, const Tensor& e, Tensor* out) {
  const bool ok = VisitBySize(t.dtype(), [&](auto zero) {
    using E = decltype(zero);
    const bool* pc = cond.base<bool>();
    const E* pt = static_cast<const E*>(t.raw_data());
    const E* pe = static_cast<const E*>(e.raw_data());
    E* po = static_cast<E*>(out->raw_data());
    const int64_t sc = plan.inner_stride(0), st = plan.inner_stride(1), se = plan.inner_stride(2);
    ShardElementwise(ctx, plan.num_elements(), kCheapElementCost, [&](int64_t begin, int64_t end) {
      plan.ForEachSegment(begin, end, [&](int64_t o, const int64_t* in, int64_t len) {
        SelectSegment(pc + in[0], sc, pt + in[1], st, pe + in[2], se, po + o, len);
      });
    });
  });
  if (!ok) ctx->SetStatus(UnsupportedType(t.dtype()));
}

class SelectOp : public OpKernel {
 public:
  explicit SelectOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    OP_REQUIRES(ctx, t.shape() == e.shape(),
                errors::InvalidArgument("'t' and 'e' must have the same shape: ",
                                        t.shape().DebugString(), " vs ", e.shape().DebugString()));
    if (cond.dims() == 0) {
      ctx->set_output(0, cond.scalar<bool>() ? t : e);
      return;
    }
    if (cond.shape() == t.shape()) {
      BroadcastPlan plan;
      OP_REQUIRES_OK(ctx, BroadcastPlan::Make({cond.shape(), t.shape(), e.shape()}, &plan));
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({1, 2}, 0, t.shape(), &out));
      SelectBroadcast(ctx, plan, cond, t, e, out);
      return;
    }
    OP_REQUIRES(
        ctx, cond.dims() == 1 && t.dims() >= 1 && cond.dim_size(0) == t.dim_size(0),
        errors::InvalidArgument("'cond' must be a scalar, a vector matching dimension 0 of 't', "
                                "or have the shape of 't': cond ",
                                cond.shape().DebugString(), " vs t ", t.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({1, 2}, 0, t.shape(), &out));
    const int64_t rows = t.dim_size(0);
    if (t.NumElements() == 0) return;
    const int64_t row_elems = t.NumElements() / rows;
    const bool* pc = cond.base<bool>();
    const bool ok = VisitBySize(t.dtype(), [&](auto zero) {
      using E = decltype(zero);
      const E* pt = static_cast<const E*>(t.raw_data());
      const E* pe = static_cast<const E*>(e.raw_data());
      E* po = static_cast<E*>(out->raw_data());
      for (int64_t r = 0; r < rows; ++r) {
        const E* src = (pc[r] ? pt : pe) + r * row_elems;
        E* dst = po + r * row_elems;
        if (src != dst) std::copy(src, src + row_elems, dst);
      }
    });
    if (!ok) ctx->SetStatus(UnsupportedType(t.dtype()));
  }
};

class SelectV2Op : public OpKernel {
 public:
  explicit SelectV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    BroadcastPlan plan;
    OP_REQUIRES_OK(ctx, BroadcastPlan::Make({cond.shape(), t.shape(), e.shape()}, &plan));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx,
                   ctx->forward_input_or_allocate_output({1, 2}, 0, plan.output_shape(), &out));
    if (plan.num_elements() == 0) return;
    SelectBroadcast(ctx, plan, cond, t, e, out);
  }
};

std::vector<DataType> SelectTypes() {
  return {DT_FLOAT, DT_DOUBLE, DT_BFLOAT16, DT_INT32,  DT_INT64, DT_UINT8, DT_INT8,
          DT_INT16, DT_UINT16, DT_UINT32,   DT_UINT64, DT_BOOL,  DT_STRING};
}

REGISTER_KERNEL_BUILDER(Name("Select").Device(kDeviceCpu).TypeConstraint("T", SelectTypes()),
                        SelectOp);
REGISTER_KERNEL_BUILDER(Name("SelectV2").Device(kDeviceCpu).TypeConstraint("T", SelectTypes()),
                        SelectV2Op);

}  // namespace
}  // namespace distflow
