// Datasets and iterators, the tf.data model in graph mode. A dataset op's
// kernel builds a DatasetBase — an immutable description of a sequence of
// elements (each a tuple of tensors with the dataset's output dtypes and
// shapes) — and outputs it in a DT_VARIANT scalar. An iterator is one pass
// over a dataset: MakeIterator starts it, GetNext yields elements in order
// until the end of the sequence. Datasets hold their input datasets, and an
// iterator holds its dataset, by shared ownership, so a pipeline stays alive
// as long as any iterator over it.
//
// Thread safety: a DatasetBase is immutable and safe to share and to make
// iterators from concurrently. An IteratorBase is not thread-safe: its
// owner (the iterator resource, a prefetching producer) serializes calls.
#ifndef DISTFLOW_DATA_DATASET_H_
#define DISTFLOW_DATA_DATASET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/types.h"
#include "distflow/framework/variant.h"

namespace distflow {

// What an iterator may use while producing an element.
struct IteratorContext {
  // The step asking for the element (borrowed; may be null): an iterator
  // that waits (for a prefetching producer) stops with Cancelled when the
  // step is cancelled.
  CancellationManager* cancellation_manager = nullptr;
};

// One pass over a dataset.
class IteratorBase {
 public:
  virtual ~IteratorBase() = default;
  // Sets *end_of_sequence and leaves `out` empty at the end; otherwise fills
  // `out` with the next element, one tensor per component. Once the end is
  // reached every later call reports it again. An error names the dataset
  // node and what was wrong; the iterator may not be used after one.
  virtual absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                               bool* end_of_sequence) = 0;
};

class DatasetBase : public VariantValue, public std::enable_shared_from_this<DatasetBase> {
 public:
  // `node_name` is the graph node that built the dataset, for messages.
  DatasetBase(std::string node_name, DataTypeVector output_dtypes,
              std::vector<PartialTensorShape> output_shapes);

  const std::string& node_name() const { return node_name_; }
  const DataTypeVector& output_dtypes() const { return output_dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const { return output_shapes_; }

  // A new iterator positioned before the first element.
  virtual absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const = 0;

  std::string TypeName() const override { return "Dataset"; }
  // "<op> '<node>'", e.g. "BatchDatasetV2 'batch'".
  std::string DebugString() const override;

 protected:
  // The op's name, e.g. "BatchDatasetV2".
  virtual std::string OpName() const = 0;

 private:
  const std::string node_name_;
  const DataTypeVector output_dtypes_;
  const std::vector<PartialTensorShape> output_shapes_;
};

using DatasetPtr = std::shared_ptr<const DatasetBase>;

// The dataset held by a DT_VARIANT scalar; InvalidArgument naming `what`
// (e.g. "input 'input_dataset' of node 'batch'") when `t` is not one.
absl::StatusOr<DatasetPtr> DatasetFromVariantTensor(const Tensor& t, const std::string& what);

// A DT_VARIANT scalar holding `dataset`.
Tensor DatasetToVariantTensor(DatasetPtr dataset);

}  // namespace distflow

#endif  // DISTFLOW_DATA_DATASET_H_
