#include "distflow/framework/tensor_shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/checked_math.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {

TensorShape::TensorShape(std::initializer_list<int64_t> dims)
    : TensorShape(absl::Span<const int64_t>(dims.begin(), dims.size())) {}

TensorShape::TensorShape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {
  for (int64_t d : dims_) DF_CHECK(d >= 0);
  Recompute();
}

absl::Status TensorShape::BuildTensorShape(absl::Span<const int64_t> dims, TensorShape* out) {
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return errors::InvalidArgument("dimension ", i, " of shape [", absl::StrJoin(dims, ","),
                                     "] must be >= 0, got ", dims[i]);
    }
    if (!MultiplyWithoutOverflow<int64_t>(n, dims[i], &n)) {
      return errors::InvalidArgument("shape [", absl::StrJoin(dims, ","),
                                     "] has more than 2^63 - 1 elements");
    }
  }
  out->dims_.assign(dims.begin(), dims.end());
  out->num_elements_ = n;
  return absl::OkStatus();
}

absl::Status TensorShape::FromProto(const TensorShapeProto& proto, TensorShape* out) {
  if (proto.unknown_rank()) {
    return errors::InvalidArgument("shape of unknown rank where a fully defined shape is required");
  }
  DimVector dims;
  for (const auto& d : proto.dim()) {
    if (d.size() < 0) {
      return errors::InvalidArgument(
          "shape has an unknown dimension where a fully defined shape is required");
    }
    dims.push_back(d.size());
  }
  return BuildTensorShape(dims, out);
}

void TensorShape::Recompute() {
  // -1 when the count overflows: never a wrapped count that looks valid.
  num_elements_ = CheckedElementCount(dims_);
}

void TensorShape::AddDim(int64_t size) {
  DF_CHECK(size >= 0);
  dims_.push_back(size);
  Recompute();
}

absl::Status TensorShape::AddDimWithStatus(int64_t size) {
  int64_t n;
  if (size < 0) {
    return errors::InvalidArgument("dimension ", dims(), " of shape ", DebugString(), " + [", size,
                                   "] must be >= 0, got ", size);
  }
  if (num_elements_ < 0 || !MultiplyWithoutOverflow<int64_t>(num_elements_, size, &n)) {
    return errors::InvalidArgument("shape ", DebugString(), " + [", size,
                                   "] has more than 2^63 - 1 elements");
  }
  dims_.push_back(size);
  num_elements_ = n;
  return absl::OkStatus();
}

void TensorShape::InsertDim(int d, int64_t size) {
  DF_CHECK(size >= 0 && d >= 0 && d <= dims());
  dims_.insert(dims_.begin() + d, size);
  Recompute();
}

void TensorShape::RemoveDim(int d) {
  DF_CHECK(d >= 0 && d < dims());
  dims_.erase(dims_.begin() + d);
  Recompute();
}

void TensorShape::set_dim(int d, int64_t size) {
  DF_CHECK(size >= 0 && d >= 0 && d < dims());
  dims_[d] = size;
  Recompute();
}

void TensorShape::Clear() {
  dims_.clear();
  num_elements_ = 1;
}

std::string TensorShape::DebugString() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
}

void TensorShape::AsProto(TensorShapeProto* proto) const {
  proto->Clear();
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

PartialTensorShape::PartialTensorShape(std::initializer_list<int64_t> dims)
    : PartialTensorShape(absl::Span<const int64_t>(dims.begin(), dims.size())) {}

PartialTensorShape::PartialTensorShape(absl::Span<const int64_t> dims)
    : unknown_rank_(false), dims_(dims.begin(), dims.end()) {
  for (int64_t d : dims_) DF_CHECK(d >= -1);
}

PartialTensorShape::PartialTensorShape(const TensorShape& shape)
    : unknown_rank_(false), dims_(shape.dim_sizes().begin(), shape.dim_sizes().end()) {}

PartialTensorShape PartialTensorShape::UnknownDims(int rank) {
  PartialTensorShape s;
  s.unknown_rank_ = false;
  s.dims_.assign(rank, -1);
  return s;
}

absl::Status PartialTensorShape::FromProto(const TensorShapeProto& proto, PartialTensorShape* out) {
  // Unknown rank, in place: assigning a temporary makes GCC 12 warn about
  // the empty InlinedVector's uninitialized inline storage.
  out->unknown_rank_ = true;
  out->dims_.clear();
  if (proto.unknown_rank()) {
    if (proto.dim_size() > 0) {
      return errors::InvalidArgument("shape has unknown_rank set and also lists dimensions");
    }
    return absl::OkStatus();
  }
  out->unknown_rank_ = false;
  for (const auto& d : proto.dim()) {
    if (d.size() < -1) {
      return errors::InvalidArgument("shape dimension must be >= -1, got ", d.size());
    }
    out->dims_.push_back(d.size());
  }
  return absl::OkStatus();
}

int64_t PartialTensorShape::num_elements() const {
  if (unknown_rank_) return -1;
  // -1 (as for an unknown count) when a dim is unknown or the count
  // overflows int64; never a wrapped count.
  return CheckedElementCount(dims_);
}

bool PartialTensorShape::IsFullyDefined() const {
  if (unknown_rank_) return false;
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

bool PartialTensorShape::AsTensorShape(TensorShape* out) const {
  if (!IsFullyDefined()) return false;
  return TensorShape::BuildTensorShape(dims_, out).ok();
}

bool PartialTensorShape::IsCompatibleWith(const PartialTensorShape& other) const {
  if (unknown_rank_ || other.unknown_rank_) return true;
  if (dims_.size() != other.dims_.size()) return false;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] >= 0 && other.dims_[i] >= 0 && dims_[i] != other.dims_[i]) {
      return false;
    }
  }
  return true;
}

bool PartialTensorShape::IsCompatibleWith(const TensorShape& shape) const {
  return IsCompatibleWith(PartialTensorShape(shape));
}

absl::Status PartialTensorShape::MergeWith(const PartialTensorShape& other,
                                           PartialTensorShape* result) const {
  if (unknown_rank_) {
    *result = other;
    return absl::OkStatus();
  }
  if (other.unknown_rank_) {
    *result = *this;
    return absl::OkStatus();
  }
  if (dims_.size() != other.dims_.size()) {
    return errors::InvalidArgument("shapes ", DebugString(), " and ", other.DebugString(),
                                   " have different ranks");
  }
  PartialTensorShape merged = *this;
  for (size_t i = 0; i < dims_.size(); ++i) {
    const int64_t a = dims_[i], b = other.dims_[i];
    if (a >= 0 && b >= 0 && a != b) {
      return errors::InvalidArgument("shapes ", DebugString(), " and ", other.DebugString(),
                                     " are incompatible at dimension ", i);
    }
    merged.dims_[i] = a >= 0 ? a : b;
  }
  *result = std::move(merged);
  return absl::OkStatus();
}

bool PartialTensorShape::IsIdenticalTo(const PartialTensorShape& other) const {
  return unknown_rank_ == other.unknown_rank_ && dims_ == other.dims_;
}

void PartialTensorShape::AddDim(int64_t size) {
  DF_CHECK(!unknown_rank_ && size >= -1);
  dims_.push_back(size);
}

std::string PartialTensorShape::DebugString() const {
  if (unknown_rank_) return "<unknown>";
  return absl::StrCat("[",
                      absl::StrJoin(dims_, ",",
                                    [](std::string* out, int64_t d) {
                                      if (d < 0) {
                                        out->append("?");
                                      } else {
                                        absl::StrAppend(out, d);
                                      }
                                    }),
                      "]");
}

void PartialTensorShape::AsProto(TensorShapeProto* proto) const {
  proto->Clear();
  if (unknown_rank_) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

}  // namespace distflow
