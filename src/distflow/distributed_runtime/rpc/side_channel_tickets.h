// The producer's table of tensors waiting to be fetched over the tensor
// side channel, by ticket. A ticket is the only authentication the side
// channel has: it is handed out in the reply to an authenticated RecvTensor
// call, is 128 random bits, is redeemed at most once, and lapses after
// `lifetime`. The table holds a reference to each tensor (not a copy) and
// is bounded in tickets and in bytes: when full, Issue declines and the
// caller sends the tensor over gRPC instead. All methods are thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_TICKETS_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_TICKETS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "distflow/framework/tensor.h"

namespace distflow {

class SideChannelTickets {
 public:
  struct Limits {
    size_t max_tickets = 1024;
    uint64_t max_bytes = uint64_t{8} << 30;
    absl::Duration lifetime = absl::Seconds(60);
  };

  explicit SideChannelTickets(Limits limits) : limits_(limits) {}
  SideChannelTickets(const SideChannelTickets&) = delete;
  SideChannelTickets& operator=(const SideChannelTickets&) = delete;

  // Holds `tensor` under a new ticket until it is redeemed or lapses at
  // now + lifetime. Nothing (and nothing held) when the table is at either
  // limit or the kernel gives no random bytes.
  std::optional<SideChannelTicket> Issue(const Tensor& tensor, absl::Time now = absl::Now());

  // The tensor held under `ticket`, which leaves the table. NotFound when
  // the ticket was never issued, was redeemed already or has lapsed.
  absl::StatusOr<Tensor> Redeem(const SideChannelTicket& ticket, absl::Time now = absl::Now());

  // Drops every ticket that has lapsed by `now`.
  void Expire(absl::Time now = absl::Now());

  size_t size() const;
  uint64_t bytes() const;

 private:
  struct Entry {
    Tensor tensor;
    absl::Time expires;
  };
  struct TicketHash {
    size_t operator()(const SideChannelTicket& t) const;
  };
  void ExpireLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Limits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<SideChannelTicket, Entry, TicketHash> entries_ ABSL_GUARDED_BY(mu_);
  // Tickets in the order they lapse (every ticket lives `lifetime`); some
  // may have been redeemed already.
  std::deque<std::pair<absl::Time, SideChannelTicket>> by_expiry_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_SIDE_CHANNEL_TICKETS_H_
