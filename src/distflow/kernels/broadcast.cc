#include "distflow/kernels/broadcast.h"

#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {

absl::Status BroadcastTensorShapes(const TensorShape& a, const TensorShape& b, TensorShape* out) {
  const int rank = std::max(a.dims(), b.dims());
  DimVector dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.dims() - rank + i, ib = b.dims() - rank + i;
    const int64_t da = ia >= 0 ? a.dim_size(ia) : 1;
    const int64_t db = ib >= 0 ? b.dim_size(ib) : 1;
    if (da != db && da != 1 && db != 1) {
      return errors::InvalidArgument("incompatible shapes for broadcasting: ", a.DebugString(),
                                     " and ", b.DebugString());
    }
    dims[i] = da == 1 ? db : da;
  }
  // Each input's count fits int64, but the broadcast product may not
  // ([2^40,1] with [1,2^40]).
  return TensorShape::BuildTensorShape(dims, out);
}

absl::Status BroadcastPlan::Make(std::initializer_list<TensorShape> shapes, BroadcastPlan* plan) {
  DF_CHECK(shapes.size() >= 1 && shapes.size() <= kMaxInputs);
  const TensorShape* in = shapes.begin();
  const int n = static_cast<int>(shapes.size());
  TensorShape out = in[0];
  for (int i = 1; i < n; ++i) {
    DF_RETURN_IF_ERROR(BroadcastTensorShapes(out, in[i], &out));
  }
  plan->num_inputs_ = n;
  plan->output_shape_ = out;
  plan->dims_.clear();
  for (int i = 0; i < n; ++i) plan->strides_[i].clear();

  // Collapse: drop output dims of extent 1, merge neighbours whose inputs
  // all broadcast the same way. bcast[i] is kept per collapsed dim.
  const int rank = out.dims();
  absl::InlinedVector<bool, 8> flags[kMaxInputs];
  for (int d = 0; d < rank; ++d) {
    const int64_t od = out.dim_size(d);
    if (od == 1) continue;
    bool bcast[kMaxInputs];
    bool same_as_last = !plan->dims_.empty();
    for (int i = 0; i < n; ++i) {
      const int id = in[i].dims() - rank + d;
      bcast[i] = id < 0 || in[i].dim_size(id) == 1;
      if (same_as_last && flags[i].back() != bcast[i]) same_as_last = false;
    }
    if (same_as_last) {
      plan->dims_.back() *= od;
    } else {
      plan->dims_.push_back(od);
      for (int i = 0; i < n; ++i) flags[i].push_back(bcast[i]);
    }
  }
  if (plan->dims_.empty()) {
    plan->dims_.push_back(1);
    for (int i = 0; i < n; ++i) flags[i].push_back(true);
  }
  const int crank = static_cast<int>(plan->dims_.size());
  for (int i = 0; i < n; ++i) {
    plan->strides_[i].resize(crank);
    int64_t stride = 1;
    for (int d = crank - 1; d >= 0; --d) {
      if (flags[i][d]) {
        plan->strides_[i][d] = 0;
      } else {
        plan->strides_[i][d] = stride;
        stride *= plan->dims_[d];
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace distflow
