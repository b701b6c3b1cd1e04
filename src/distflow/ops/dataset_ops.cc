// The tf.data ops in graph mode: dataset ops, each outputting a DT_VARIANT
// scalar that holds a dataset, and the iterator ops on a DT_RESOURCE
// iterator handle. Names, inputs, outputs and attrs follow TensorFlow's.
// Kernels live in data/.
#include <vector>

#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// Every scalar input is checked; the output is the dataset's scalar variant.
absl::Status DatasetShape(InferenceContext* c, int first_scalar_input) {
  for (int i = first_scalar_input; i < c->num_inputs(); ++i) {
    DF_RETURN_IF_ERROR(c->WithScalar(i));
  }
  return ScalarShape(c);
}

// A dataset op whose inputs are all scalars (the input dataset among them).
absl::Status ScalarInputsDatasetShape(InferenceContext* c) { return DatasetShape(c, 0); }

// TensorSliceDataset's components each have at least one dimension.
absl::Status TensorSliceDatasetShape(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) {
    DF_RETURN_IF_ERROR(c->WithRankAtLeast(i, 1, nullptr));
  }
  return ScalarShape(c);
}

// FixedLengthRecordDatasetV2's filenames is a scalar or a vector.
absl::Status FixedLengthRecordDatasetShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithRankAtMost(0, 1, nullptr));
  return DatasetShape(c, 1);
}

// IteratorGetNext's components have the shapes of its output_shapes attr.
absl::Status IteratorGetNextShape(InferenceContext* c) {
  DF_RETURN_IF_ERROR(c->WithScalar(0));
  std::vector<PartialTensorShape> shapes;
  DF_RETURN_IF_ERROR(c->GetAttr("output_shapes", &shapes));
  if (static_cast<int>(shapes.size()) != c->num_outputs()) {
    return errors::InvalidArgument("output_shapes has ", shapes.size(), " shapes but there are ",
                                   c->num_outputs(), " output_types");
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
  return absl::OkStatus();
}

// A handle and its deleter, both scalars.
absl::Status HandleAndDeleterShape(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) DF_RETURN_IF_ERROR(c->WithScalar(i));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape({}));
  return absl::OkStatus();
}

absl::Status ScalarInputsNoOutputs(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) DF_RETURN_IF_ERROR(c->WithScalar(i));
  return NoOutputs(c);
}

}  // namespace

REGISTER_OP("TensorSliceDataset")
    .Input("components: Toutput_types")
    .Output("handle: variant")
    .Attr("Toutput_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("is_files: bool = false")
    .Attr("metadata: string = ''")
    .Attr("replicate_on_split: bool = false")
    .SetIsStateful()
    .SetShapeFn(TensorSliceDatasetShape)
    .Doc("The rows of the components (sliced along dimension 0) as elements.");

REGISTER_OP("RangeDataset")
    .Input("start: int64")
    .Input("stop: int64")
    .Input("step: int64")
    .Output("handle: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("metadata: string = ''")
    .Attr("replicate_on_split: bool = false")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsDatasetShape)
    .Doc("start, start + step, ... up to (excluding) stop, as int64 scalars.");

REGISTER_OP("ZipDataset")
    .Input("input_datasets: N * variant")
    .Output("handle: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("N: int >= 1")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsDatasetShape)
    .Doc("Tuples of the inputs' elements, side by side, until the shortest input ends.");

REGISTER_OP("MapDataset")
    .Input("input_dataset: variant")
    .Input("other_arguments: Targuments")
    .Output("handle: variant")
    .Attr("f: func")
    .Attr("Targuments: list(type) >= 0")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("use_inter_op_parallelism: bool = true")
    .Attr("preserve_cardinality: bool = false")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc("f applied to each element (with other_arguments after its components).");

REGISTER_OP("ParallelMapDatasetV2")
    .Input("input_dataset: variant")
    .Input("other_arguments: Targuments")
    .Input("num_parallel_calls: int64")
    .Output("handle: variant")
    .Attr("f: func")
    .Attr("Targuments: list(type) >= 0")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("use_inter_op_parallelism: bool = true")
    .Attr("deterministic: string = 'default'")
    .Attr("preserve_cardinality: bool = false")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc("MapDataset with up to num_parallel_calls calls in flight, results in order.");

REGISTER_OP("ShuffleDataset")
    .Input("input_dataset: variant")
    .Input("buffer_size: int64")
    .Input("seed: int64")
    .Input("seed2: int64")
    .Output("handle: variant")
    .Attr("reshuffle_each_iteration: bool = true")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsDatasetShape)
    .Doc("The input's elements in random order, drawn from a buffer of buffer_size.");

REGISTER_OP("ShuffleDatasetV3")
    .Input("input_dataset: variant")
    .Input("buffer_size: int64")
    .Input("seed: int64")
    .Input("seed2: int64")
    .Input("seed_generator: resource")
    .Output("handle: variant")
    .Attr("reshuffle_each_iteration: bool = true")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsDatasetShape)
    .Doc("ShuffleDataset whose per-iteration seeds come from a seed generator resource.");

REGISTER_OP("AnonymousSeedGenerator")
    .Input("seed: int64")
    .Input("seed2: int64")
    .Input("reshuffle: bool")
    .Output("handle: resource")
    .Output("deleter: variant")
    .SetIsStateful()
    .SetShapeFn(HandleAndDeleterShape)
    .Doc("A new seed generator; it is deleted with its deleter.");

REGISTER_OP("DeleteSeedGenerator")
    .Input("handle: resource")
    .Input("deleter: variant")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsNoOutputs)
    .Doc("Deletes the seed generator of an AnonymousSeedGenerator.");

REGISTER_OP("BatchDatasetV2")
    .Input("input_dataset: variant")
    .Input("batch_size: int64")
    .Input("drop_remainder: bool")
    .Output("handle: variant")
    .Attr("parallel_copy: bool = false")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsDatasetShape)
    .Doc("Consecutive elements stacked along a new dimension 0.");

REGISTER_OP("RepeatDataset")
    .Input("input_dataset: variant")
    .Input("count: int64")
    .Output("handle: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsDatasetShape)
    .Doc("The input count times (-1: forever).");

REGISTER_OP("TakeDataset")
    .Input("input_dataset: variant")
    .Input("count: int64")
    .Output("handle: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsDatasetShape)
    .Doc("At most the first count elements of the input (-1: all).");

REGISTER_OP("SkipDataset")
    .Input("input_dataset: variant")
    .Input("count: int64")
    .Output("handle: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsDatasetShape)
    .Doc("The input without its first count elements (-1: all of them).");

REGISTER_OP("PrefetchDataset")
    .Input("input_dataset: variant")
    .Input("buffer_size: int64")
    .Output("handle: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .Attr("slack_period: int = 0")
    .Attr("legacy_autotune: bool = true")
    .Attr("buffer_output_elements: int = -1")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsDatasetShape)
    .Doc("The input, produced ahead by a background thread into a bounded buffer.");

REGISTER_OP("FixedLengthRecordDatasetV2")
    .Input("filenames: string")
    .Input("header_bytes: int64")
    .Input("record_bytes: int64")
    .Input("footer_bytes: int64")
    .Input("buffer_size: int64")
    .Input("compression_type: string")
    .Output("handle: variant")
    .Attr("metadata: string = ''")
    .SetIsStateful()
    .SetShapeFn(FixedLengthRecordDatasetShape)
    .Doc("The fixed-size records of files (optionally GZIP-compressed), as strings.");

REGISTER_OP("IteratorV2")
    .Output("handle: resource")
    .Attr("shared_name: string")
    .Attr("container: string")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc("A named iterator resource (created on first use).");

REGISTER_OP("AnonymousIteratorV2")
    .Output("handle: resource")
    .Output("deleter: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetIsStateful()
    .SetShapeFn(HandleAndDeleterShape)
    .Doc("A new iterator resource; it is deleted with its deleter.");

REGISTER_OP("MakeIterator")
    .Input("dataset: variant")
    .Input("iterator: resource")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsNoOutputs)
    .Doc("Starts a new pass of the iterator over the dataset.");

REGISTER_OP("IteratorGetNext")
    .Input("iterator: resource")
    .Output("components: output_types")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetIsStateful()
    .SetShapeFn(IteratorGetNextShape)
    .Doc("The iterator's next element; OutOfRange at the end of the sequence.");

REGISTER_OP("IteratorToStringHandle")
    .Input("resource_handle: resource")
    .Output("string_handle: string")
    .SetShapeFn(ScalarShape)
    .Doc("The iterator's handle as a string (a serialized ResourceHandleProto), to be fed "
         "back to IteratorFromStringHandleV2 on the iterator's device.");

REGISTER_OP("IteratorFromStringHandleV2")
    .Input("string_handle: string")
    .Output("resource_handle: resource")
    .Attr("output_types: list(type) >= 0 = []")
    .Attr("output_shapes: list(shape) >= 0 = []")
    .SetIsStateful()
    .SetShapeFn(ScalarShape)
    .Doc("The iterator a string handle names; it must live on this op's device.");

REGISTER_OP("DeleteIterator")
    .Input("handle: resource")
    .Input("deleter: variant")
    .SetIsStateful()
    .SetShapeFn(ScalarInputsNoOutputs)
    .Doc("Deletes an iterator resource.");

}  // namespace distflow
