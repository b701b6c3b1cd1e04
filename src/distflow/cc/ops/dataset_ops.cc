#include "distflow/cc/ops/dataset_ops.h"

#include "distflow/cc/op_builder.h"

namespace distflow {
namespace ops {

using internal::AllOutputs;
using internal::BuildOp;

DatasetOutput::DatasetOutput(Node* node) : operation(node), handle(operation.output(0)) {}

TensorSliceDataset::TensorSliceDataset(const Scope& scope, InputList components,
                                       const std::vector<PartialTensorShape>& output_shapes)
    : DatasetOutput(
          BuildOp(scope, "TensorSliceDataset", {components}, {{"output_shapes", output_shapes}})) {}

RangeDataset::RangeDataset(const Scope& scope, Input start, Input stop, Input step)
    : DatasetOutput(BuildOp(scope, "RangeDataset", {start, stop, step},
                            {{"output_types", DataTypeVector{DT_INT64}},
                             {"output_shapes", std::vector<PartialTensorShape>{{}}}})) {}

ZipDataset::ZipDataset(const Scope& scope, InputList input_datasets,
                       const DatasetStructure& structure)
    : DatasetOutput(
          BuildOp(scope, "ZipDataset", {input_datasets},
                  {{"output_types", structure.types}, {"output_shapes", structure.shapes}})) {}

ShuffleDataset::ShuffleDataset(const Scope& scope, Input input_dataset, Input buffer_size,
                               Input seed, Input seed2, const DatasetStructure& structure,
                               bool reshuffle_each_iteration)
    : DatasetOutput(BuildOp(scope, "ShuffleDataset", {input_dataset, buffer_size, seed, seed2},
                            {{"reshuffle_each_iteration", reshuffle_each_iteration},
                             {"output_types", structure.types},
                             {"output_shapes", structure.shapes}})) {}

BatchDatasetV2::BatchDatasetV2(const Scope& scope, Input input_dataset, Input batch_size,
                               Input drop_remainder, const DatasetStructure& structure)
    : DatasetOutput(
          BuildOp(scope, "BatchDatasetV2", {input_dataset, batch_size, drop_remainder},
                  {{"output_types", structure.types}, {"output_shapes", structure.shapes}})) {}

namespace {

NameAttrList FunctionNamed(const std::string& f) {
  NameAttrList func;
  func.set_name(f);
  return func;
}

}  // namespace

MapDataset::MapDataset(const Scope& scope, Input input_dataset, InputList other_arguments,
                       const std::string& f, const DatasetStructure& structure)
    : DatasetOutput(BuildOp(scope, "MapDataset", {input_dataset, other_arguments},
                            {{"f", FunctionNamed(f)},
                             {"output_types", structure.types},
                             {"output_shapes", structure.shapes}})) {}

ParallelMapDatasetV2::ParallelMapDatasetV2(const Scope& scope, Input input_dataset,
                                           InputList other_arguments, Input num_parallel_calls,
                                           const std::string& f, const DatasetStructure& structure)
    : DatasetOutput(BuildOp(scope, "ParallelMapDatasetV2",
                            {input_dataset, other_arguments, num_parallel_calls},
                            {{"f", FunctionNamed(f)},
                             {"output_types", structure.types},
                             {"output_shapes", structure.shapes}})) {}

RepeatDataset::RepeatDataset(const Scope& scope, Input input_dataset, Input count,
                             const DatasetStructure& structure)
    : DatasetOutput(
          BuildOp(scope, "RepeatDataset", {input_dataset, count},
                  {{"output_types", structure.types}, {"output_shapes", structure.shapes}})) {}

TakeDataset::TakeDataset(const Scope& scope, Input input_dataset, Input count,
                         const DatasetStructure& structure)
    : DatasetOutput(
          BuildOp(scope, "TakeDataset", {input_dataset, count},
                  {{"output_types", structure.types}, {"output_shapes", structure.shapes}})) {}

SkipDataset::SkipDataset(const Scope& scope, Input input_dataset, Input count,
                         const DatasetStructure& structure)
    : DatasetOutput(
          BuildOp(scope, "SkipDataset", {input_dataset, count},
                  {{"output_types", structure.types}, {"output_shapes", structure.shapes}})) {}

PrefetchDataset::PrefetchDataset(const Scope& scope, Input input_dataset, Input buffer_size,
                                 const DatasetStructure& structure)
    : DatasetOutput(
          BuildOp(scope, "PrefetchDataset", {input_dataset, buffer_size},
                  {{"output_types", structure.types}, {"output_shapes", structure.shapes}})) {}

FixedLengthRecordDatasetV2::FixedLengthRecordDatasetV2(const Scope& scope, Input filenames,
                                                       Input header_bytes, Input record_bytes,
                                                       Input footer_bytes, Input buffer_size,
                                                       Input compression_type)
    : DatasetOutput(BuildOp(
          scope, "FixedLengthRecordDatasetV2",
          {filenames, header_bytes, record_bytes, footer_bytes, buffer_size, compression_type})) {}

IteratorV2::IteratorV2(const Scope& scope, const std::string& shared_name,
                       const DatasetStructure& structure)
    : operation(BuildOp(scope, "IteratorV2", {},
                        {{"shared_name", shared_name},
                         {"container", std::string()},
                         {"output_types", structure.types},
                         {"output_shapes", structure.shapes}})),
      handle(operation.output(0)) {}

AnonymousIteratorV2::AnonymousIteratorV2(const Scope& scope, const DatasetStructure& structure)
    : operation(BuildOp(scope, "AnonymousIteratorV2", {},
                        {{"output_types", structure.types}, {"output_shapes", structure.shapes}})),
      handle(operation.output(0)),
      deleter(operation.output(1)) {}

MakeIterator::MakeIterator(const Scope& scope, Input dataset, Input iterator)
    : operation(BuildOp(scope, "MakeIterator", {dataset, iterator})) {}

IteratorGetNext::IteratorGetNext(const Scope& scope, Input iterator,
                                 const DatasetStructure& structure)
    : operation(BuildOp(scope, "IteratorGetNext", {iterator},
                        {{"output_types", structure.types}, {"output_shapes", structure.shapes}})),
      components(AllOutputs(operation)) {}

IteratorToStringHandle::IteratorToStringHandle(const Scope& scope, Input iterator)
    : operation(BuildOp(scope, "IteratorToStringHandle", {iterator})),
      string_handle(operation.output(0)) {}

IteratorFromStringHandleV2::IteratorFromStringHandleV2(const Scope& scope, Input string_handle,
                                                       const DatasetStructure& structure)
    : operation(BuildOp(scope, "IteratorFromStringHandleV2", {string_handle},
                        {{"output_types", structure.types}, {"output_shapes", structure.shapes}})),
      handle(operation.output(0)) {}

DeleteIterator::DeleteIterator(const Scope& scope, Input handle, Input deleter)
    : operation(BuildOp(scope, "DeleteIterator", {handle, deleter})) {}

DecodeRaw::DecodeRaw(const Scope& scope, Input bytes, DataType out_type, bool little_endian)
    : operation(BuildOp(scope, "DecodeRaw", {bytes},
                        {{"out_type", out_type}, {"little_endian", little_endian}})),
      output(operation.output(0)) {}

}  // namespace ops
}  // namespace distflow
