#include "distflow/cc/dataset.h"

#include <utility>

#include "distflow/core/status.h"
#include "distflow/graph/shape_refiner.h"

namespace distflow {
namespace {

Input Int64(int64_t v) { return Input::Initializer(v); }

}  // namespace

Dataset Dataset::FromTensorSlices(const Scope& scope, const std::vector<Output>& components) {
  ops::DatasetStructure structure;
  OutputList inputs;
  for (const Output& c : components) {
    structure.types.push_back(c.type());
    PartialTensorShape row;  // unknown rank unless the component's is known
    if (c.node() != nullptr) {
      const PartialTensorShape s = scope.refiner()->OutputShape(c.node(), c.index());
      if (!s.unknown_rank() && s.dims() >= 1) {
        row = PartialTensorShape(s.dim_sizes().subspan(1));
      }
    }
    structure.shapes.push_back(row);
    inputs.push_back(c);
  }
  ops::TensorSliceDataset d(scope, inputs, structure.shapes);
  return Dataset(scope, d.handle, std::move(structure));
}

Dataset Dataset::Range(const Scope& scope, int64_t start, int64_t stop, int64_t step) {
  ops::RangeDataset d(scope, Int64(start), Int64(stop), Int64(step));
  return Dataset(scope, d.handle, {{DT_INT64}, {PartialTensorShape({})}});
}

Dataset Dataset::FixedLengthRecords(const Scope& scope, const std::vector<std::string>& files,
                                    int64_t header_bytes, int64_t record_bytes,
                                    int64_t footer_bytes, const std::string& compression) {
  Tensor names(DT_STRING, TensorShape({static_cast<int64_t>(files.size())}));
  for (size_t i = 0; i < files.size(); ++i) names.flat<std::string>()[i] = files[i];
  ops::FixedLengthRecordDatasetV2 d(scope, names, Int64(header_bytes), Int64(record_bytes),
                                    Int64(footer_bytes), Int64(0), compression);
  return Dataset(scope, d.handle, {{DT_STRING}, {PartialTensorShape({})}});
}

Dataset Dataset::Zip(const Scope& scope, const std::vector<Dataset>& datasets) {
  ops::DatasetStructure structure;
  OutputList inputs;
  for (const Dataset& d : datasets) {
    structure.types.insert(structure.types.end(), d.structure_.types.begin(),
                           d.structure_.types.end());
    structure.shapes.insert(structure.shapes.end(), d.structure_.shapes.begin(),
                            d.structure_.shapes.end());
    inputs.push_back(d.handle_);
  }
  ops::ZipDataset zip(scope, inputs, structure);
  return Dataset(scope, zip.handle, std::move(structure));
}

Dataset Dataset::Shuffle(int64_t buffer_size, int64_t seed, int64_t seed2,
                         bool reshuffle_each_iteration) const {
  ops::ShuffleDataset d(scope_, handle_, Int64(buffer_size), Int64(seed), Int64(seed2), structure_,
                        reshuffle_each_iteration);
  return Dataset(scope_, d.handle, structure_);
}

Dataset Dataset::Map(const std::string& function, const std::vector<Output>& captured,
                     ops::DatasetStructure structure, int64_t num_parallel_calls) const {
  if (num_parallel_calls == 0) {
    ops::MapDataset d(scope_, handle_, captured, function, structure);
    return Dataset(scope_, d.handle, std::move(structure));
  }
  ops::ParallelMapDatasetV2 d(scope_, handle_, captured, Int64(num_parallel_calls), function,
                              structure);
  return Dataset(scope_, d.handle, std::move(structure));
}

Dataset Dataset::Batch(int64_t batch_size, bool drop_remainder) const {
  ops::DatasetStructure batched = structure_;
  for (PartialTensorShape& s : batched.shapes) {
    if (s.unknown_rank()) continue;
    std::vector<int64_t> dims = {drop_remainder ? batch_size : -1};
    dims.insert(dims.end(), s.dim_sizes().begin(), s.dim_sizes().end());
    s = PartialTensorShape(absl::Span<const int64_t>(dims));
  }
  ops::BatchDatasetV2 d(scope_, handle_, Int64(batch_size), drop_remainder, batched);
  return Dataset(scope_, d.handle, std::move(batched));
}

Dataset Dataset::Repeat(int64_t count) const {
  ops::RepeatDataset d(scope_, handle_, Int64(count), structure_);
  return Dataset(scope_, d.handle, structure_);
}

Dataset Dataset::Take(int64_t count) const {
  ops::TakeDataset d(scope_, handle_, Int64(count), structure_);
  return Dataset(scope_, d.handle, structure_);
}

Dataset Dataset::Skip(int64_t count) const {
  ops::SkipDataset d(scope_, handle_, Int64(count), structure_);
  return Dataset(scope_, d.handle, structure_);
}

Dataset Dataset::Take(const Output& count) const {
  ops::TakeDataset d(scope_, handle_, count, structure_);
  return Dataset(scope_, d.handle, structure_);
}

Dataset Dataset::Skip(const Output& count) const {
  ops::SkipDataset d(scope_, handle_, count, structure_);
  return Dataset(scope_, d.handle, structure_);
}

Dataset Dataset::Prefetch(int64_t buffer_size) const {
  ops::PrefetchDataset d(scope_, handle_, Int64(buffer_size), structure_);
  return Dataset(scope_, d.handle, structure_);
}

DatasetIterator Dataset::MakeIterator(const std::string& shared_name) const {
  ops::IteratorV2 it(scope_, shared_name, structure_);
  ops::MakeIterator make(scope_, handle_, it.handle);
  ops::IteratorGetNext next(scope_, it.handle, structure_);
  return DatasetIterator{it.handle, make.operation, next.components};
}

}  // namespace distflow
