// The tensor bytes this process has moved to and from its peer tasks, by
// direction, peer task and transport (gRPC, the TCP side channel, verbs),
// for the server's status page and /metrics. A sender counts what it
// answered a RecvTensor with (the peer is the receiving device's task, read
// from the rendezvous key); a receiver counts what it got. Process-wide;
// each count is one mutex and one hash lookup. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_TRANSFER_STATS_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_TRANSFER_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace distflow {

enum class TensorTransport { kGrpc, kSideChannel, kVerbs };
const char* TensorTransportName(TensorTransport t);  // "grpc", "side_channel", "verbs"

// Counts one tensor of `bytes` sent to (or received from) `peer_task`
// ("/job:J/replica:R/task:T"; anything else is counted as given).
void CountTensorTransfer(bool sent, TensorTransport transport, absl::string_view peer_task,
                         int64_t bytes);

// The task part of a device name ("/job:w/replica:0/task:1/device:CPU:0"
// -> "/job:w/replica:0/task:1"); the name itself when it has no device part.
std::string TaskOfDevice(absl::string_view device);

struct TensorTransferRow {
  std::string peer;
  std::string transport;
  bool sent;
  int64_t tensors;
  int64_t bytes;
};
// Every (direction, peer, transport) counted so far, sorted by peer,
// transport, then received before sent.
std::vector<TensorTransferRow> TensorTransfers();

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_TRANSFER_STATS_H_
