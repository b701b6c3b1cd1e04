// RecvTensorResponse on the wire without per-element fields or extra copies.
// Encoding writes the message header (dtype, shape, field tags) as one small
// slice and points a second slice at the tensor's own buffer (the slice
// holds a reference to the tensor until gRPC is done with it), so sending
// copies nothing. Decoding allocates the destination tensor once and copies
// each incoming slice into it — one copy, into aligned memory. The bytes are
// an ordinary RecvTensorResponse, so any protobuf parser reads them.
// Functions are thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_TENSOR_CODING_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_TENSOR_CODING_H_

#include <cstdint>

#include "absl/status/status.h"
#include "distflow/framework/tensor.h"
#include "grpcpp/support/byte_buffer.h"

namespace distflow {

void EncodeRecvTensorResponse(const Tensor& tensor, bool is_dead, int64_t send_start_micros,
                              grpc::ByteBuffer* out);

// DataLoss naming the problem when the bytes are not a well-formed
// RecvTensorResponse (truncated, garbage, a tensor_content of the wrong size).
absl::Status DecodeRecvTensorResponse(const grpc::ByteBuffer& in, Tensor* tensor, bool* is_dead,
                                      int64_t* send_start_micros);

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_TENSOR_CODING_H_
