// DecodeRaw: reinterpret the bytes of each string as a vector of numbers.
// Name, inputs and attrs follow TensorFlow's.
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

}  // namespace

REGISTER_OP("DecodeRaw")
    .Input("bytes: string")
    .Output("output: out_type")
    .Attr("out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, bool}")
    .Attr("little_endian: bool = true")
    .SetShapeFn(DecodeRawShape)
    .Doc("Each string's bytes as a vector of out_type; all strings must be the same length.");

}  // namespace distflow
