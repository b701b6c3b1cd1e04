// Dataset: builds a tf.data pipeline in a graph, fluently:
//
//   Dataset d = Dataset::FromTensorSlices(scope, {images, labels})
//                   .Shuffle(10000, /*seed=*/7).Batch(64).Prefetch();
//   DatasetIterator it = d.MakeIterator("train");
//   session.Run({}, {}, {it.initializer}, nullptr);   // once per pass
//   session.Run({}, it.next, {}, &batch);             // OutOfRange at the end
//
// Each call adds one dataset node to the scope's graph and tracks the
// element structure (dtypes and shapes) the next op needs, as TensorFlow's
// Python Dataset does. A Dataset is a value describing nodes already in the
// graph; building errors go to the scope (check scope.status()). Not
// thread-safe: build a graph from one thread.
#ifndef DISTFLOW_CC_DATASET_H_
#define DISTFLOW_CC_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "distflow/cc/ops/dataset_ops.h"

namespace distflow {

// An iterator built over a dataset: `initializer` starts a pass (run it as a
// target), `next` are the IteratorGetNext outputs, one per component.
struct DatasetIterator {
  Output handle;
  Operation initializer;
  OutputList next;
};

class Dataset {
 public:
  // The rows of each component (sliced along dimension 0).
  static Dataset FromTensorSlices(const Scope& scope, const std::vector<Output>& components);
  // int64 scalars start, start + step, ... before stop.
  static Dataset Range(const Scope& scope, int64_t start, int64_t stop, int64_t step = 1);
  // Fixed-size records of `files` as string scalars; `compression` is "" or
  // "GZIP".
  static Dataset FixedLengthRecords(const Scope& scope, const std::vector<std::string>& files,
                                    int64_t header_bytes, int64_t record_bytes,
                                    int64_t footer_bytes = 0, const std::string& compression = "");
  // Elements of the datasets side by side.
  static Dataset Zip(const Scope& scope, const std::vector<Dataset>& datasets);

  // seed == seed2 == 0 picks fresh random seeds.
  Dataset Shuffle(int64_t buffer_size, int64_t seed = 0, int64_t seed2 = 0,
                  bool reshuffle_each_iteration = true) const;
  Dataset Batch(int64_t batch_size, bool drop_remainder = false) const;
  // count -1: forever.
  Dataset Repeat(int64_t count = -1) const;
  Dataset Take(int64_t count) const;
  Dataset Skip(int64_t count) const;
  // The same with the count computed in the graph (an int64 scalar), e.g.
  // fed per run.
  Dataset Take(const Output& count) const;
  Dataset Skip(const Output& count) const;
  // buffer_size -1: AUTOTUNE.
  Dataset Prefetch(int64_t buffer_size = -1) const;
  // `function` (in the graph's library) applied to each element: its
  // arguments are the element's components, then `captured`; `structure`
  // is its outputs'. num_parallel_calls 0: one call at a time (MapDataset);
  // n > 0 or -1 (AUTOTUNE): ParallelMapDatasetV2.
  Dataset Map(const std::string& function, const std::vector<Output>& captured,
              ops::DatasetStructure structure, int64_t num_parallel_calls = 0) const;

  // An iterator resource over this dataset (named `shared_name`, or the
  // iterator node's name when empty).
  DatasetIterator MakeIterator(const std::string& shared_name = "") const;

  Output handle() const { return handle_; }
  const ops::DatasetStructure& structure() const { return structure_; }

 private:
  Dataset(Scope scope, Output handle, ops::DatasetStructure structure)
      : scope_(std::move(scope)), handle_(handle), structure_(std::move(structure)) {}

  Scope scope_;
  Output handle_;
  ops::DatasetStructure structure_;
};

}  // namespace distflow

#endif  // DISTFLOW_CC_DATASET_H_
