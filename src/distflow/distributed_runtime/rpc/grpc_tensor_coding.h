// RecvTensorResponse on the wire without per-element fields or extra copies.
// Encoding writes the message header (dtype, shape, field tags) as one small
// slice and points a second slice at the tensor's own buffer (the slice
// holds a reference to the tensor until gRPC is done with it), so sending
// copies nothing. Decoding allocates the destination tensor once and copies
// each incoming slice into it — one copy, into aligned memory. The bytes are
// an ordinary RecvTensorResponse, so any protobuf parser reads them.
//
// A reply may instead offer the bytes over the producer's tensor side
// channel (side_channel_server.h): it then carries the tensor's dtype and
// shape, no content, and a RecvTensorSideChannel written before the tensor.
// Functions are thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_TENSOR_CODING_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_TENSOR_CODING_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "distflow/framework/tensor.h"
#include "grpcpp/support/byte_buffer.h"

namespace distflow {

// `side_channel_port`, when positive, tells the receiver where the
// producer's side channel listens (RecvTensorResponse.side_channel_port).
void EncodeRecvTensorResponse(const Tensor& tensor, bool is_dead, int64_t send_start_micros,
                              grpc::ByteBuffer* out, int side_channel_port = 0);

// Where a tensor's bytes wait on the producer's side channel.
// With `follows`, the bytes come right after the reply on the keyed
// connection that carried it instead (no ticket, no port).
struct SideChannelOffer {
  SideChannelTicket ticket{};
  int port = 0;
  uint64_t payload_bytes = 0;
  bool follows = false;
};

// A reply carrying `tensor`'s dtype and shape and `offer` for its bytes.
// REQUIRES: tensor's dtype has fixed-size elements and
// offer.payload_bytes == tensor.TotalBytes().
void EncodeRecvTensorOffer(const Tensor& tensor, const SideChannelOffer& offer,
                           int64_t send_start_micros, grpc::ByteBuffer* out);

// DataLoss naming the problem when the bytes are not a well-formed
// RecvTensorResponse (truncated, garbage, a tensor_content of the wrong size).
// When the reply offers a side channel, *offer gets it and *tensor is
// allocated with the reply's dtype and shape, its bytes uninitialized (the
// caller fetches them, then calls CanonicalizeBools); DataLoss when the
// offer's size is not the tensor's, or when `offer` is null (the caller did
// not ask for one). ResourceExhausted when the tensor cannot be allocated.
// *side_channel_port (may be null) gets the port the reply names, 0 when
// none (DataLoss when it is not a port).
absl::Status DecodeRecvTensorResponse(const grpc::ByteBuffer& in, Tensor* tensor, bool* is_dead,
                                      int64_t* send_start_micros,
                                      std::optional<SideChannelOffer>* offer = nullptr,
                                      int* side_channel_port = nullptr);

// A bool holds 0 or 1 only: any other byte received as a bool becomes 1.
// Nothing for other dtypes.
void CanonicalizeBools(Tensor* tensor);

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_TENSOR_CODING_H_
