// _Send and _Recv: the ends of a cross-partition edge. A _Send leaves its
// input in the step's rendezvous under a key built from its attrs; the
// matching _Recv (same attrs) picks it up. With client_terminated, one end is
// the client (a fed or fetched tensor).
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"

namespace distflow {

REGISTER_OP("_Send")
    .Input("tensor: T")
    .Attr("T: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .SetIsStateful()
    .SetShapeFn(NoOutputs)
    .Doc("Sends a tensor to the recv_device through the step's rendezvous.");

REGISTER_OP("_Recv")
    .Output("tensor: tensor_type")
    .Attr("tensor_type: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .SetIsStateful()
    .SetShapeFn(UnknownShape)
    .Doc("Receives a tensor from the send_device through the step's rendezvous.");

}  // namespace distflow
