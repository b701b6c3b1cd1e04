// DynamicStitch: interleaves the rows of several tensors by index, as TF1
// graphs use it (the gradient of Mean and Sum writes it to build shapes).
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {

REGISTER_OP("DynamicStitch")
    .Input("indices: N * int32")
    .Input("data: N * T")
    .Output("merged: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .SetShapeFn(UnknownShape)
    .Doc(
        "merged[indices[m][i, ...], ...] = data[m][i, ...]; later inputs win where indices "
        "repeat; rows no index names are zero.");

}  // namespace distflow
