#include "distflow/distributed_runtime/rpc/side_channel_tickets.h"

#include <cstring>

#include "distflow/core/status.h"

namespace distflow {

size_t SideChannelTickets::TicketHash::operator()(const SideChannelTicket& t) const {
  // The bits are random already.
  size_t h;
  std::memcpy(&h, t.data(), sizeof(h));
  return h;
}

std::optional<SideChannelTicket> SideChannelTickets::Issue(const Tensor& tensor, absl::Time now) {
  const uint64_t size = tensor.TotalBytes();
  absl::MutexLock lock(&mu_);
  ExpireLocked(now);
  if (entries_.size() >= limits_.max_tickets || size > limits_.max_bytes ||
      bytes_ > limits_.max_bytes - size) {
    return std::nullopt;
  }
  absl::StatusOr<SideChannelTicket> ticket = NewSideChannelTicket();
  if (!ticket.ok() || entries_.contains(*ticket)) return std::nullopt;
  const absl::Time expires = now + limits_.lifetime;
  entries_.emplace(*ticket, Entry{tensor, expires});
  by_expiry_.emplace_back(expires, *ticket);
  bytes_ += size;
  // Redeemed tickets stay in the queue until they would have lapsed; keep
  // it within a small multiple of the live ones.
  if (by_expiry_.size() > 4 * limits_.max_tickets) {
    std::deque<std::pair<absl::Time, SideChannelTicket>> live;
    for (const auto& e : by_expiry_) {
      if (entries_.contains(e.second)) live.push_back(e);
    }
    by_expiry_.swap(live);
  }
  return *ticket;
}

absl::StatusOr<Tensor> SideChannelTickets::Redeem(const SideChannelTicket& ticket, absl::Time now) {
  absl::MutexLock lock(&mu_);
  ExpireLocked(now);
  auto it = entries_.find(ticket);
  if (it == entries_.end()) {
    return errors::NotFound("unknown, used or expired side-channel ticket");
  }
  Tensor t = std::move(it->second.tensor);
  bytes_ -= t.TotalBytes();
  entries_.erase(it);
  return t;
}

void SideChannelTickets::Expire(absl::Time now) {
  absl::MutexLock lock(&mu_);
  ExpireLocked(now);
}

void SideChannelTickets::ExpireLocked(absl::Time now) {
  while (!by_expiry_.empty() && by_expiry_.front().first <= now) {
    auto it = entries_.find(by_expiry_.front().second);
    // A ticket redeemed and (improbably) issued again lapses later.
    if (it != entries_.end() && it->second.expires <= now) {
      bytes_ -= it->second.tensor.TotalBytes();
      entries_.erase(it);
    }
    by_expiry_.pop_front();
  }
}

size_t SideChannelTickets::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

uint64_t SideChannelTickets::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace distflow
