// IteratorResource: the state behind an iterator handle (IteratorV2,
// AnonymousIteratorV2): the element structure it was declared with and the
// current pass over a dataset. MakeIterator replaces the pass; GetNext
// yields its elements, each checked against the declared dtypes and shapes.
// Thread-safe: calls are serialized by the resource's lock, so concurrent
// steps each get distinct elements.
#ifndef DISTFLOW_DATA_ITERATOR_RESOURCE_H_
#define DISTFLOW_DATA_ITERATOR_RESOURCE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/data/dataset.h"
#include "distflow/framework/resource_mgr.h"

namespace distflow {

class IteratorResource : public ResourceBase {
 public:
  IteratorResource(DataTypeVector output_dtypes, std::vector<PartialTensorShape> output_shapes);

  // InvalidArgument naming the mismatch unless `dtypes` and `shapes` are
  // what this iterator was declared with (IteratorV2 finding an existing
  // resource of the same name).
  absl::Status MatchesStructure(const DataTypeVector& dtypes,
                                const std::vector<PartialTensorShape>& shapes) const;

  // Starts a new pass over `dataset`, dropping the previous one (a
  // prefetching pass stops its thread). InvalidArgument when the dataset's
  // elements do not have this iterator's structure.
  absl::Status MakeIterator(const DatasetPtr& dataset);

  // The next element (see IteratorBase::GetNext). FailedPrecondition before
  // the first MakeIterator; InvalidArgument when an element does not have
  // the declared dtypes and shapes.
  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end_of_sequence);

  std::string DebugString() const override;

 private:
  const DataTypeVector output_dtypes_;
  const std::vector<PartialTensorShape> output_shapes_;
  mutable absl::Mutex mu_;
  DatasetPtr dataset_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<IteratorBase> iterator_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DATA_ITERATOR_RESOURCE_H_
