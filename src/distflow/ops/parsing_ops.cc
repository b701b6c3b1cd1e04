// Parsing ops: DecodeRaw (the bytes of each string as a vector of numbers)
// and ParseExample / ParseExampleV2 (serialized tf.Example records into
// dense, sparse and ragged tensors; kernels/example_parser.h says how).
// Names, inputs, outputs and attrs follow TensorFlow's.
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// bytes' shape plus one dimension, unknown until the strings are seen.
absl::Status DecodeRawShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  if (in.unknown_rank()) return UnknownShape(c);
  std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end());
  dims.push_back(-1);
  c->set_output(0, PartialTensorShape(absl::Span<const int64_t>(dims)));
  return absl::OkStatus();
}

// The outputs of ParseExample(V2) after the sparse ones, for a batch of
// shape `batch` (a scalar or a vector, possibly unknown).
absl::Status SetSparseShapes(InferenceContext* c, const PartialTensorShape& batch, int num_sparse,
                             int* output) {
  const int64_t rank = batch.unknown_rank() ? -1 : batch.dims() + 1;
  for (int i = 0; i < num_sparse; ++i) c->set_output((*output)++, PartialTensorShape({-1, rank}));
  for (int i = 0; i < num_sparse; ++i) c->set_output((*output)++, PartialTensorShape({-1}));
  for (int i = 0; i < num_sparse; ++i) c->set_output((*output)++, PartialTensorShape({rank}));
  return absl::OkStatus();
}

// Dense output j is the batch's shape followed by dense_shapes[j].
absl::Status SetDenseShapes(InferenceContext* c, const PartialTensorShape& batch, int num_dense,
                            int* output) {
  std::vector<PartialTensorShape> shapes;
  DF_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &shapes));
  if (static_cast<int>(shapes.size()) != num_dense) {
    return errors::InvalidArgument("dense_shapes has ", shapes.size(), " shapes for ", num_dense,
                                   " dense keys");
  }
  for (const PartialTensorShape& s : shapes) {
    if (batch.unknown_rank() || s.unknown_rank()) {
      c->set_output((*output)++, PartialTensorShape());
      continue;
    }
    std::vector<int64_t> dims(batch.dim_sizes().begin(), batch.dim_sizes().end());
    dims.insert(dims.end(), s.dim_sizes().begin(), s.dim_sizes().end());
    c->set_output((*output)++, PartialTensorShape(absl::Span<const int64_t>(dims)));
  }
  return absl::OkStatus();
}

absl::Status ParseExampleShape(InferenceContext* c) {
  PartialTensorShape batch;
  DF_RETURN_IF_ERROR(c->WithRank(0, 1, &batch));
  DF_RETURN_IF_ERROR(c->WithRank(1, 1, nullptr));
  int num_sparse = 0, num_dense = 0;
  DF_RETURN_IF_ERROR(c->GetAttr("Nsparse", &num_sparse));
  DF_RETURN_IF_ERROR(c->GetAttr("Ndense", &num_dense));
  for (int i = 2; i < 2 + num_sparse + num_dense; ++i) DF_RETURN_IF_ERROR(c->WithScalar(i));
  int output = 0;
  DF_RETURN_IF_ERROR(SetSparseShapes(c, batch, num_sparse, &output));
  return SetDenseShapes(c, batch, num_dense, &output);
}

absl::Status ParseExampleV2Shape(InferenceContext* c) {
  PartialTensorShape batch;
  DF_RETURN_IF_ERROR(c->WithRankAtMost(0, 1, &batch));
  for (int i = 1; i <= 4; ++i) DF_RETURN_IF_ERROR(c->WithRankAtMost(i, 1, nullptr));
  int num_sparse = 0;
  DF_RETURN_IF_ERROR(c->GetAttr("num_sparse", &num_sparse));
  DataTypeVector dense_types, ragged_types, split_types;
  DF_RETURN_IF_ERROR(c->GetAttr("Tdense", &dense_types));
  DF_RETURN_IF_ERROR(c->GetAttr("ragged_value_types", &ragged_types));
  DF_RETURN_IF_ERROR(c->GetAttr("ragged_split_types", &split_types));
  if (ragged_types.size() != split_types.size()) {
    return errors::InvalidArgument("ragged_value_types has ", ragged_types.size(),
                                   " types but ragged_split_types has ", split_types.size());
  }
  int output = 0;
  DF_RETURN_IF_ERROR(SetSparseShapes(c, batch, num_sparse, &output));
  DF_RETURN_IF_ERROR(SetDenseShapes(c, batch, static_cast<int>(dense_types.size()), &output));
  int64_t splits = -1;
  if (!batch.unknown_rank()) {
    splits = batch.dims() == 0 ? 2 : (batch.dim_size(0) < 0 ? -1 : batch.dim_size(0) + 1);
  }
  for (size_t i = 0; i < ragged_types.size(); ++i) {
    c->set_output(output++, PartialTensorShape({-1}));
  }
  for (size_t i = 0; i < split_types.size(); ++i) {
    c->set_output(output++, PartialTensorShape({splits}));
  }
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("ParseExample")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: Nsparse * string")
    .Input("dense_keys: Ndense * string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: Nsparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: Nsparse * int64")
    .Output("dense_values: Tdense")
    .Attr("Nsparse: int >= 0")
    .Attr("Ndense: int >= 0")
    .Attr("sparse_types: list({float, int64, string}) >= 0")
    .Attr("Tdense: list({float, int64, string}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .SetShapeFn(ParseExampleShape)
    .Doc(
        "Parses a vector of serialized tf.Example records: per sparse key its (indices, values, "
        "shape); per dense key a [batch, dense_shape] tensor, missing features taking their "
        "default (empty: the feature is required).");

REGISTER_OP("ParseExampleV2")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: string")
    .Input("dense_keys: string")
    .Input("ragged_keys: string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: num_sparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: num_sparse * int64")
    .Output("dense_values: Tdense")
    .Output("ragged_values: ragged_value_types")
    .Output("ragged_row_splits: ragged_split_types")
    .Attr("Tdense: list({float, int64, string}) >= 0")
    .Attr("num_sparse: int >= 0")
    .Attr("sparse_types: list({float, int64, string}) >= 0")
    .Attr("ragged_value_types: list({float, int64, string}) >= 0")
    .Attr("ragged_split_types: list({int32, int64}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .SetShapeFn(ParseExampleV2Shape)
    .Doc(
        "ParseExample with the keys as vectors, a scalar or vector batch, and ragged features "
        "(values and row splits).");

REGISTER_OP("DecodeRaw")
    .Input("bytes: string")
    .Output("output: out_type")
    .Attr("out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, bool}")
    .Attr("little_endian: bool = true")
    .SetShapeFn(DecodeRawShape)
    .Doc("Each string's bytes as a vector of out_type; all strings must be the same length.");

}  // namespace distflow
