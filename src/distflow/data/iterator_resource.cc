#include "distflow/data/iterator_resource.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

std::string ShapesString(const std::vector<PartialTensorShape>& shapes) {
  std::string out = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? ", " : "", shapes[i].DebugString());
  }
  return out + "]";
}

}  // namespace

IteratorResource::IteratorResource(DataTypeVector output_dtypes,
                                   std::vector<PartialTensorShape> output_shapes)
    : output_dtypes_(std::move(output_dtypes)), output_shapes_(std::move(output_shapes)) {}

absl::Status IteratorResource::MatchesStructure(
    const DataTypeVector& dtypes, const std::vector<PartialTensorShape>& shapes) const {
  bool same = dtypes == output_dtypes_ && shapes.size() == output_shapes_.size();
  for (size_t i = 0; same && i < shapes.size(); ++i) {
    same = shapes[i].IsIdenticalTo(output_shapes_[i]);
  }
  if (same) return absl::OkStatus();
  return errors::InvalidArgument("the iterator yields ", DataTypeSliceString(output_dtypes_),
                                 " of shapes ", ShapesString(output_shapes_), ", not ",
                                 DataTypeSliceString(dtypes), " of shapes ", ShapesString(shapes));
}

absl::Status IteratorResource::MakeIterator(const DatasetPtr& dataset) {
  bool compatible = dataset->output_dtypes() == output_dtypes_ &&
                    dataset->output_shapes().size() == output_shapes_.size();
  for (size_t i = 0; compatible && i < output_shapes_.size(); ++i) {
    compatible = output_shapes_[i].IsCompatibleWith(dataset->output_shapes()[i]);
  }
  if (!compatible) {
    return errors::InvalidArgument(
        "dataset ", dataset->DebugString(), " yields ",
        DataTypeSliceString(dataset->output_dtypes()), " of shapes ",
        ShapesString(dataset->output_shapes()), " but the iterator was declared with ",
        DataTypeSliceString(output_dtypes_), " of shapes ", ShapesString(output_shapes_));
  }
  DF_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> iterator, dataset->MakeIterator());
  std::unique_ptr<IteratorBase> old;
  {
    absl::MutexLock lock(&mu_);
    old = std::move(iterator_);
    iterator_ = std::move(iterator);
    dataset_ = dataset;
  }
  // `old` (maybe a prefetching pass joining its thread) ends outside the lock.
  return absl::OkStatus();
}

absl::Status IteratorResource::GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                                       bool* end_of_sequence) {
  absl::MutexLock lock(&mu_);
  if (iterator_ == nullptr) {
    return errors::FailedPrecondition(
        "GetNext() failed because the iterator has not been initialized: run its MakeIterator "
        "(the initializer) before getting the next element");
  }
  DF_RETURN_IF_ERROR(iterator_->GetNext(ctx, out, end_of_sequence));
  if (*end_of_sequence) return absl::OkStatus();
  if (out->size() != output_dtypes_.size()) {
    return errors::InvalidArgument("dataset ", dataset_->DebugString(), " produced ", out->size(),
                                   " components; the iterator expects ", output_dtypes_.size());
  }
  for (size_t i = 0; i < out->size(); ++i) {
    const Tensor& t = (*out)[i];
    if (t.dtype() != output_dtypes_[i] ||
        (i < output_shapes_.size() && !output_shapes_[i].IsCompatibleWith(t.shape()))) {
      return errors::InvalidArgument(
          "dataset ", dataset_->DebugString(), " produced component ", i, " as ",
          DataTypeString(t.dtype()), " of shape ", t.shape().DebugString(),
          "; the iterator expects ", DataTypeString(output_dtypes_[i]), " of shape ",
          i < output_shapes_.size() ? output_shapes_[i].DebugString() : "<unknown>");
    }
  }
  return absl::OkStatus();
}

std::string IteratorResource::DebugString() const {
  absl::MutexLock lock(&mu_);
  return absl::StrCat("Iterator of ", DataTypeSliceString(output_dtypes_), " over ",
                      dataset_ == nullptr ? "nothing yet" : dataset_->DebugString());
}

}  // namespace distflow
