#include "distflow/framework/shape_inference.h"

#include <algorithm>

#include "distflow/core/status.h"

namespace distflow {

InferenceContext::InferenceContext(const NodeDef& node_def, const OpDef& op_def,
                                   DataTypeVector input_types, DataTypeVector output_types,
                                   std::vector<PartialTensorShape> input_shapes,
                                   std::vector<const Tensor*> input_tensors)
    : node_def_(node_def),
      op_def_(op_def),
      input_types_(std::move(input_types)),
      output_types_(std::move(output_types)),
      inputs_(std::move(input_shapes)),
      input_tensors_(std::move(input_tensors)),
      outputs_(output_types_.size()) {
  input_tensors_.resize(inputs_.size(), nullptr);
}

absl::Status InferenceContext::WithRank(int i, int rank, PartialTensorShape* out) const {
  const PartialTensorShape& s = inputs_[i];
  if (s.unknown_rank()) {
    if (out) *out = PartialTensorShape::UnknownDims(rank);
    return absl::OkStatus();
  }
  if (s.dims() != rank) {
    return errors::InvalidArgument("input ", i, " must be rank ", rank, " but has shape ",
                                   s.DebugString());
  }
  if (out) *out = s;
  return absl::OkStatus();
}

absl::Status InferenceContext::WithRankAtLeast(int i, int rank, PartialTensorShape* out) const {
  const PartialTensorShape& s = inputs_[i];
  if (!s.unknown_rank() && s.dims() < rank) {
    return errors::InvalidArgument("input ", i, " must be at least rank ", rank, " but has shape ",
                                   s.DebugString());
  }
  if (out) *out = s;
  return absl::OkStatus();
}

absl::Status InferenceContext::WithRankAtMost(int i, int rank, PartialTensorShape* out) const {
  const PartialTensorShape& s = inputs_[i];
  if (!s.unknown_rank() && s.dims() > rank) {
    return errors::InvalidArgument("input ", i, " must be at most rank ", rank, " but has shape ",
                                   s.DebugString());
  }
  if (out) *out = s;
  return absl::OkStatus();
}

absl::Status InferenceContext::WithScalar(int i) const { return WithRank(i, 0, nullptr); }

bool InferenceContext::VectorInputValues(int i, std::vector<int64_t>* values) const {
  const Tensor* t = input_tensors_[i];
  if (t == nullptr) return false;
  values->clear();
  if (t->dtype() == DT_INT32) {
    for (int32_t v : t->flat<int32_t>()) values->push_back(v);
  } else if (t->dtype() == DT_INT64) {
    for (int64_t v : t->flat<int64_t>()) values->push_back(v);
  } else {
    return false;
  }
  return true;
}

bool InferenceContext::ScalarInputValue(int i, int64_t* value) const {
  std::vector<int64_t> v;
  if (!VectorInputValues(i, &v) || v.size() != 1) return false;
  *value = v[0];
  return true;
}

absl::Status InferenceContext::ShapeFromShapeTensor(int i, PartialTensorShape* out) const {
  DF_RETURN_IF_ERROR(WithRankAtMost(i, 1, nullptr));
  std::vector<int64_t> values;
  if (VectorInputValues(i, &values)) {
    if (input_tensors_[i]->dims() == 0) {
      return errors::InvalidArgument("input ", i, " must be a 1-D shape tensor, got a scalar");
    }
    for (int64_t v : values) {
      if (v < -1) {
        return errors::InvalidArgument("input ", i, " has invalid dimension ", v);
      }
    }
    *out = PartialTensorShape(values);
    return absl::OkStatus();
  }
  const PartialTensorShape& s = inputs_[i];
  if (s.dims() == 1 && s.dim_size(0) >= 0) {
    *out = PartialTensorShape::UnknownDims(static_cast<int>(s.dim_size(0)));
  } else {
    *out = PartialTensorShape::Unknown();
  }
  return absl::OkStatus();
}

absl::Status UnknownShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape::Unknown());
  return absl::OkStatus();
}

absl::Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext* c) {
  c->set_output(0, PartialTensorShape({}));
  return absl::OkStatus();
}

absl::Status NoOutputs(InferenceContext* /*c*/) { return absl::OkStatus(); }

absl::Status BroadcastShapes(const PartialTensorShape& a, const PartialTensorShape& b,
                             PartialTensorShape* out) {
  if (a.unknown_rank() || b.unknown_rank()) {
    *out = PartialTensorShape::Unknown();
    return absl::OkStatus();
  }
  const int rank = std::max(a.dims(), b.dims());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.dims() - rank + i, ib = b.dims() - rank + i;
    const int64_t da = ia >= 0 ? a.dim_size(ia) : 1;
    const int64_t db = ib >= 0 ? b.dim_size(ib) : 1;
    if (da == 1) {
      dims[i] = db;
    } else if (db == 1) {
      dims[i] = da;
    } else if (da == -1 || db == -1) {
      dims[i] = da == -1 ? db : da;
      // An unknown dim against a known d > 1 must be d or 1: d is the result.
    } else if (da == db) {
      dims[i] = da;
    } else {
      return errors::InvalidArgument("incompatible shapes for broadcasting: ", a.DebugString(),
                                     " and ", b.DebugString());
    }
  }
  *out = PartialTensorShape(dims);
  return absl::OkStatus();
}

absl::Status BroadcastBinaryOpShape(InferenceContext* c) {
  PartialTensorShape out;
  DF_RETURN_IF_ERROR(BroadcastShapes(c->input(0), c->input(1), &out));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace distflow
