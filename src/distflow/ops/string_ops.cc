// String ops TensorFlow's saver graphs use to name checkpoint files:
// StringJoin and ShardedFilename (names, inputs and attrs as TensorFlow's).
#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {
namespace {

// Scalars broadcast; every other input must have one shape, the output's.
absl::Status StringJoinShape(InferenceContext* c) {
  PartialTensorShape out = TensorShape();
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialTensorShape& s = c->input(i);
    if (s.dims() == 0) continue;
    PartialTensorShape merged;
    if (out.dims() != 0 && !out.MergeWith(s, &merged).ok()) {
      return errors::InvalidArgument("StringJoin inputs must be scalars or of one shape, got ",
                                     out.DebugString(), " and ", s.DebugString());
    }
    out = out.dims() == 0 ? s : merged;
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("StringJoin")
    .Input("inputs: N * string")
    .Output("output: string")
    .Attr("N: int >= 0")
    .Attr("separator: string = ''")
    .SetShapeFn(StringJoinShape)
    .Doc(
        "Joins the strings of its inputs element-wise, with separator between them; "
        "scalar inputs broadcast.");

REGISTER_OP("ShardedFilename")
    .Input("basename: string")
    .Input("shard: int32")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn(ScalarShape)
    .Doc("The file name of shard `shard` of `num_shards`: basename-0000K-of-0000N.");

}  // namespace distflow
