// The status a call stream's reply carries (grpc_call_stream.h): a canonical
// code, a message, and whether the error was derived from another task's
// failure (core/status.h). A reply is a proto with the fields code,
// message, derived and response. The server writes a call's status into
// its reply; the client reads back the status the unary call would have
// had, marked as the server's (grpc_util.h).
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_STREAM_FRAME_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_STREAM_FRAME_H_

#include <cstdint>

#include "absl/status/status.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "grpcpp/grpcpp.h"

namespace distflow {

// Writes `s` into `reply`; an error drops the response.
template <class SResp>
void SetStreamReplyStatus(const grpc::Status& s, SResp* reply) {
  if (s.ok()) return;
  reply->clear_response();
  reply->set_code(static_cast<int32_t>(s.error_code()));
  reply->set_message(s.error_message());
  reply->set_derived(errors::IsDerived(FromGrpcStatus(s)));
}

template <class SResp>
grpc::Status StreamReplyStatus(const SResp& reply) {
  if (reply.code() == 0) return grpc::Status::OK;
  absl::Status s(static_cast<absl::StatusCode>(reply.code()), reply.message());
  return ToGrpcStatus(reply.derived() ? errors::MakeDerived(s) : s);
}

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_CALL_STREAM_FRAME_H_
