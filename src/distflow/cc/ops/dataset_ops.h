// Client wrappers for the tf.data ops (ops/dataset_ops.cc): each dataset
// class builds one node whose `handle` output is a DT_VARIANT dataset; the
// iterator classes build the iterator resource and the ops on it. Every
// dataset op takes the element structure (output_types, output_shapes) of
// what it yields, as TensorFlow's do; cc/dataset.h computes them for you.
// Each class builds its node when constructed; errors go to the scope.
#ifndef DISTFLOW_CC_OPS_DATASET_OPS_H_
#define DISTFLOW_CC_OPS_DATASET_OPS_H_

#include <string>
#include <vector>

#include "distflow/cc/ops.h"
#include "distflow/cc/scope.h"

namespace distflow {
namespace ops {

// The element structure of a dataset: one dtype and shape per component.
struct DatasetStructure {
  DataTypeVector types;
  std::vector<PartialTensorShape> shapes;
};

// A dataset op's node and its variant output.
class DatasetOutput {
 public:
  operator Output() const { return handle; }
  operator Input() const { return handle; }
  Node* node() const { return handle.node(); }
  Operation operation;
  Output handle;

 protected:
  explicit DatasetOutput(Node* node);
};

// The rows of `components` (sliced along dimension 0).
class TensorSliceDataset : public DatasetOutput {
 public:
  TensorSliceDataset(const Scope& scope, InputList components,
                     const std::vector<PartialTensorShape>& output_shapes);
};

// int64 scalars start, start + step, ... before stop.
class RangeDataset : public DatasetOutput {
 public:
  RangeDataset(const Scope& scope, Input start, Input stop, Input step);
};

// The inputs' elements side by side.
class ZipDataset : public DatasetOutput {
 public:
  ZipDataset(const Scope& scope, InputList input_datasets, const DatasetStructure& structure);
};

// Inputs are int64 scalars; see ops/dataset_ops.cc for their meaning.
class ShuffleDataset : public DatasetOutput {
 public:
  ShuffleDataset(const Scope& scope, Input input_dataset, Input buffer_size, Input seed,
                 Input seed2, const DatasetStructure& structure,
                 bool reshuffle_each_iteration = true);
};
class BatchDatasetV2 : public DatasetOutput {
 public:
  // `structure` is the batched elements' (a leading batch dimension).
  BatchDatasetV2(const Scope& scope, Input input_dataset, Input batch_size, Input drop_remainder,
                 const DatasetStructure& structure);
};
// f (a function of the graph's library, by name) applied to each element,
// its components followed by `other_arguments` (tensors the function
// captured); `structure` is f's outputs'. ParallelMapDatasetV2 runs up to
// num_parallel_calls (an int64 scalar; -1: AUTOTUNE) calls at once.
class MapDataset : public DatasetOutput {
 public:
  MapDataset(const Scope& scope, Input input_dataset, InputList other_arguments,
             const std::string& f, const DatasetStructure& structure);
};
class ParallelMapDatasetV2 : public DatasetOutput {
 public:
  ParallelMapDatasetV2(const Scope& scope, Input input_dataset, InputList other_arguments,
                       Input num_parallel_calls, const std::string& f,
                       const DatasetStructure& structure);
};
class RepeatDataset : public DatasetOutput {
 public:
  RepeatDataset(const Scope& scope, Input input_dataset, Input count,
                const DatasetStructure& structure);
};
class TakeDataset : public DatasetOutput {
 public:
  TakeDataset(const Scope& scope, Input input_dataset, Input count,
              const DatasetStructure& structure);
};
class SkipDataset : public DatasetOutput {
 public:
  SkipDataset(const Scope& scope, Input input_dataset, Input count,
              const DatasetStructure& structure);
};
class PrefetchDataset : public DatasetOutput {
 public:
  PrefetchDataset(const Scope& scope, Input input_dataset, Input buffer_size,
                  const DatasetStructure& structure);
};
// Records of `filenames` (string scalar or vector) as string scalars;
// `compression_type` is "" or "GZIP".
class FixedLengthRecordDatasetV2 : public DatasetOutput {
 public:
  FixedLengthRecordDatasetV2(const Scope& scope, Input filenames, Input header_bytes,
                             Input record_bytes, Input footer_bytes, Input buffer_size,
                             Input compression_type);
};

// A named iterator resource.
class IteratorV2 {
 public:
  IteratorV2(const Scope& scope, const std::string& shared_name, const DatasetStructure& structure);
  operator Output() const { return handle; }
  operator Input() const { return handle; }
  Operation operation;
  Output handle;
};

// A fresh iterator resource and the deleter DeleteIterator takes.
class AnonymousIteratorV2 {
 public:
  AnonymousIteratorV2(const Scope& scope, const DatasetStructure& structure);
  Operation operation;
  Output handle;
  Output deleter;
};

// Starts a pass of `iterator` over `dataset`.
class MakeIterator {
 public:
  MakeIterator(const Scope& scope, Input dataset, Input iterator);
  operator Operation() const { return operation; }
  Operation operation;
};

// The iterator's next element; OutOfRange at the end.
class IteratorGetNext {
 public:
  IteratorGetNext(const Scope& scope, Input iterator, const DatasetStructure& structure);
  Operation operation;
  OutputList components;
};

// The iterator's handle as a string a client can hold and feed back.
class IteratorToStringHandle {
 public:
  IteratorToStringHandle(const Scope& scope, Input iterator);
  operator Output() const { return string_handle; }
  operator Input() const { return string_handle; }
  Operation operation;
  Output string_handle;
};

// The iterator a string handle names (it must live on this op's device).
class IteratorFromStringHandleV2 {
 public:
  IteratorFromStringHandleV2(const Scope& scope, Input string_handle,
                             const DatasetStructure& structure);
  operator Output() const { return handle; }
  operator Input() const { return handle; }
  Operation operation;
  Output handle;
};

class DeleteIterator {
 public:
  DeleteIterator(const Scope& scope, Input handle, Input deleter);
  operator Operation() const { return operation; }
  Operation operation;
};

// Each string's bytes as a vector of `out_type`.
class DecodeRaw {
 public:
  DecodeRaw(const Scope& scope, Input bytes, DataType out_type, bool little_endian = true);
  operator Output() const { return output; }
  operator Input() const { return output; }
  Operation operation;
  Output output;
};

}  // namespace ops
}  // namespace distflow

#endif  // DISTFLOW_CC_OPS_DATASET_OPS_H_
