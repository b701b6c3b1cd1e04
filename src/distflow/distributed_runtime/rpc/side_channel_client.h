// The receiver's end of the tensor side channel (wire format in
// side_channel_wire.h): fetches the payload a producer holds under a ticket
// straight into the caller's buffer, with no copy in between. Connections
// are pooled per producer endpoint: one fetch at a time per connection, a
// new one when every pooled one is busy, at most `max_idle_per_peer` kept
// idle. A pooled connection the producer has closed meanwhile is replaced
// once, transparently.
//
// Every wait is bounded: by the caller's deadline, by `stall_timeout`
// without a byte arriving, and by `connect_timeout` for a connection.
// StartCancel on the call's options shuts the connection down, so a blocked
// read returns at once. Errors name the producer's task: Unavailable (cannot
// connect, connection closed mid-transfer, producer stalled),
// DeadlineExceeded, Cancelled, DataLoss (a reply that breaks the protocol),
// or the producer's own refusal (NotFound for an unknown ticket).
// Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_CLIENT_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "distflow/distributed_runtime/worker_interface.h"

namespace distflow {

class SideChannelClient {
 public:
  struct Options {
    int max_idle_per_peer = 4;
    absl::Duration connect_timeout = absl::Seconds(10);
    absl::Duration stall_timeout = absl::Seconds(30);
  };

  explicit SideChannelClient(Options options) : options_(options) {}
  SideChannelClient() : SideChannelClient(Options()) {}
  SideChannelClient(const SideChannelClient&) = delete;
  SideChannelClient& operator=(const SideChannelClient&) = delete;

  // Fetches the `bytes`-byte payload held under `ticket` by the producer
  // listening at host:port into dst[0, bytes). `task` names the producer in
  // errors. `opts` (may be null) can cancel the fetch; it must not carry
  // another cancel callback meanwhile. On error dst holds garbage.
  absl::Status Fetch(const std::string& host, int port, const SideChannelTicket& ticket, void* dst,
                     uint64_t bytes, absl::Time deadline, CallOptions* opts,
                     const std::string& task);

  // Idle connections to host:port, for tests.
  int IdleConnections(const std::string& host, int port);

 private:
  class Connection;
  struct Attempt;

  // A pooled idle connection that is still open, or a new one.
  absl::StatusOr<std::shared_ptr<Connection>> Take(const std::string& host, int port,
                                                   absl::Time deadline, const std::string& task,
                                                   bool* reused);
  void GiveBack(const std::string& endpoint, std::shared_ptr<Connection> c);
  Attempt Transfer(Connection* c, const SideChannelTicket& ticket, void* dst, uint64_t bytes,
                   absl::Time deadline, const std::string& task);

  const Options options_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::vector<std::shared_ptr<Connection>>> idle_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_CLIENT_H_
