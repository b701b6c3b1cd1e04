#include "distflow/distributed_runtime/rpc/side_channel_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "distflow/core/errno_text.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

constexpr char kRequestMagic[8] = {'d', 'f', 's', 'c', 'R', 'E', 'Q', '1'};
constexpr char kReplyMagic[8] = {'d', 'f', 's', 'c', 'R', 'E', 'P', '1'};
constexpr char kHelloMagic[8] = {'d', 'f', 's', 'c', 'H', 'E', 'L', '1'};
constexpr char kKeyedMagic[8] = {'d', 'f', 's', 'c', 'R', 'C', 'V', '1'};
constexpr char kPushMagic[8] = {'d', 'f', 's', 'c', 'P', 'S', 'H', '1'};

template <typename T>
void PutLe(char* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

template <typename T>
T GetLe(const char* p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

// A keyed or push request's head: magic | step id | key length | a u32.
void EncodeStepKeyHead(const char (&magic)[8], int64_t step_id, uint32_t key_bytes, uint32_t last,
                       std::array<char, kSideChannelRequestBytes>* out) {
  char* p = out->data();
  std::memcpy(p, magic, 8);
  PutLe<uint64_t>(p + 8, static_cast<uint64_t>(step_id));
  PutLe<uint32_t>(p + 16, key_bytes);
  PutLe<uint32_t>(p + 20, last);
}

// Milliseconds poll() may wait: until the deadline, and no longer than the
// stall time measured from the last byte moved. Negative when either passed.
int PollBudgetMs(absl::Time now, absl::Time deadline, absl::Time stall_at) {
  const absl::Time until = std::min(deadline, stall_at);
  if (now >= until) return -1;
  const int64_t ms = absl::ToInt64Milliseconds(absl::Ceil(until - now, absl::Milliseconds(1)));
  return static_cast<int>(std::min<int64_t>(ms, INT_MAX));
}

// The loop of ReadFully and WriteFully: try the call, wait for readiness
// only when the socket has nothing for it.
template <typename Op>
IoOutcome MoveFully(int fd, size_t n, short events, absl::Time deadline, absl::Duration stall,
                    size_t* moved, int* error, Op op) {
  *moved = 0;
  *error = 0;
  absl::Time stall_at = absl::Now() + stall;
  while (*moved < n) {
    const ssize_t r = op(*moved, n - *moved);
    if (r > 0) {
      *moved += static_cast<size_t>(r);
      stall_at = absl::Now() + stall;
      continue;
    }
    if (r == 0) return IoOutcome::kClosed;  // reads only: orderly close
    if (errno == EINTR) continue;
    if (errno == ECONNRESET || errno == EPIPE || errno == ENOTCONN) {
      *error = errno;
      return IoOutcome::kClosed;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      *error = errno;
      return IoOutcome::kError;
    }
    for (;;) {
      const absl::Time now = absl::Now();
      const int budget = PollBudgetMs(now, deadline, stall_at);
      if (budget < 0) return now >= deadline ? IoOutcome::kDeadline : IoOutcome::kStalled;
      pollfd pfd{fd, events, 0};
      const int p = poll(&pfd, 1, budget);
      if (p > 0) break;  // ready, hung up or in error: the next call says which
      if (p < 0 && errno != EINTR) {
        *error = errno;
        return IoOutcome::kError;
      }
    }
  }
  return IoOutcome::kDone;
}

}  // namespace

absl::StatusOr<SideChannelTicket> NewSideChannelTicket() {
  SideChannelTicket t;
  size_t got = 0;
  while (got < t.size()) {
    const ssize_t r = getrandom(t.data() + got, t.size() - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return errors::Internal("getrandom: ", ErrnoText(errno));
    }
    got += static_cast<size_t>(r);
  }
  return t;
}

std::string TicketBytes(const SideChannelTicket& ticket) {
  return std::string(reinterpret_cast<const char*>(ticket.data()), ticket.size());
}

bool TicketFromBytes(const std::string& bytes, SideChannelTicket* ticket) {
  if (bytes.size() != ticket->size()) return false;
  std::memcpy(ticket->data(), bytes.data(), ticket->size());
  return true;
}

void EncodeSideChannelRequest(const SideChannelTicket& ticket,
                              std::array<char, kSideChannelRequestBytes>* out) {
  std::memcpy(out->data(), kRequestMagic, 8);
  std::memcpy(out->data() + 8, ticket.data(), ticket.size());
}

bool DecodeSideChannelRequest(const std::array<char, kSideChannelRequestBytes>& in,
                              SideChannelTicket* ticket) {
  if (std::memcmp(in.data(), kRequestMagic, 8) != 0) return false;
  std::memcpy(ticket->data(), in.data() + 8, ticket->size());
  return true;
}

void EncodeSideChannelHello(uint32_t token_bytes, int sender_port,
                            std::array<char, kSideChannelRequestBytes>* out) {
  out->fill(0);
  std::memcpy(out->data(), kHelloMagic, 8);
  PutLe<uint32_t>(out->data() + 8, token_bytes);
  PutLe<uint32_t>(out->data() + 12, static_cast<uint32_t>(sender_port));
}

void EncodeSideChannelPush(int64_t step_id, uint32_t key_bytes, uint32_t payload_bytes,
                           std::array<char, kSideChannelRequestBytes>* out) {
  EncodeStepKeyHead(kPushMagic, step_id, key_bytes, payload_bytes, out);
}

void EncodeSideChannelKeyed(int64_t step_id, uint32_t key_bytes, uint32_t timeout_ms,
                            std::array<char, kSideChannelRequestBytes>* out) {
  EncodeStepKeyHead(kKeyedMagic, step_id, key_bytes, timeout_ms, out);
}

bool DecodeSideChannelRequestHead(const std::array<char, kSideChannelRequestBytes>& in,
                                  SideChannelRequestHead* head) {
  const char* p = in.data();
  if (DecodeSideChannelRequest(in, &head->ticket)) {
    head->kind = SideChannelRequestHead::Kind::kTicket;
    return true;
  }
  if (std::memcmp(p, kHelloMagic, 8) == 0) {
    head->kind = SideChannelRequestHead::Kind::kHello;
    head->length = GetLe<uint32_t>(p + 8);
    const uint32_t port = GetLe<uint32_t>(p + 12);
    if (port > 65535) return false;
    head->sender_port = static_cast<int>(port);
    return head->length <= kSideChannelMaxToken;
  }
  if (std::memcmp(p, kPushMagic, 8) == 0) {
    head->kind = SideChannelRequestHead::Kind::kPush;
    head->step_id = static_cast<int64_t>(GetLe<uint64_t>(p + 8));
    head->length = GetLe<uint32_t>(p + 16);
    head->payload_bytes = GetLe<uint32_t>(p + 20);
    return head->length > 0 && head->length <= kSideChannelMaxKey &&
           head->payload_bytes <= kSideChannelMaxPush;
  }
  if (std::memcmp(p, kKeyedMagic, 8) == 0) {
    head->kind = SideChannelRequestHead::Kind::kKeyed;
    head->step_id = static_cast<int64_t>(GetLe<uint64_t>(p + 8));
    head->length = GetLe<uint32_t>(p + 16);
    head->timeout_ms = GetLe<uint32_t>(p + 20);
    return head->length > 0 && head->length <= kSideChannelMaxKey;
  }
  return false;
}

void EncodeSideChannelReplyHeader(const SideChannelReplyHeader& header,
                                  std::array<char, kSideChannelReplyHeaderBytes>* out) {
  char* p = out->data();
  std::memcpy(p, kReplyMagic, 8);
  std::memcpy(p + 8, header.ticket.data(), header.ticket.size());
  PutLe<uint32_t>(p + 24, static_cast<uint32_t>(header.code));
  PutLe<uint32_t>(p + 28, header.message_bytes);
  PutLe<uint64_t>(p + 32, header.payload_bytes);
}

bool DecodeSideChannelReplyHeader(const std::array<char, kSideChannelReplyHeaderBytes>& in,
                                  SideChannelReplyHeader* header) {
  const char* p = in.data();
  if (std::memcmp(p, kReplyMagic, 8) != 0) return false;
  std::memcpy(header->ticket.data(), p + 8, header->ticket.size());
  const uint32_t code = GetLe<uint32_t>(p + 24);
  // absl::StatusCode runs 0 (kOk) to 16 (kUnauthenticated).
  if (code > static_cast<uint32_t>(absl::StatusCode::kUnauthenticated)) return false;
  header->code = static_cast<absl::StatusCode>(code);
  header->message_bytes = GetLe<uint32_t>(p + 28);
  header->payload_bytes = GetLe<uint64_t>(p + 32);
  return header->message_bytes <= kSideChannelMaxMessage;
}

IoOutcome ReadFully(int fd, void* buf, size_t n, absl::Time deadline, absl::Duration stall,
                    size_t* moved, int* error) {
  char* p = static_cast<char*>(buf);
  return MoveFully(fd, n, POLLIN, deadline, stall, moved, error, [fd, p](size_t off, size_t len) {
    return recv(fd, p + off, len, MSG_DONTWAIT);
  });
}

bool SetReadLowWater(int fd, int bytes) {
  return setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes)) == 0;
}

IoOutcome ReadFullyWokenLate(int fd, void* buf, size_t n, absl::Time deadline, absl::Duration stall,
                             int max_low_water, size_t* moved, int* error) {
  char* p = static_cast<char*>(buf);
  int low_water = 1;
  const IoOutcome o =
      MoveFully(fd, n, POLLIN, deadline, stall, moved, error, [&](size_t off, size_t len) {
        const ssize_t r = recv(fd, p + off, len, MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
          // Never more than is still to come: the wait must end with it.
          const int want = static_cast<int>(std::min<size_t>(len, max_low_water));
          if (want != low_water && SetReadLowWater(fd, want)) low_water = want;
          errno = EAGAIN;
        }
        return r;
      });
  if (low_water != 1) SetReadLowWater(fd, 1);
  return o;
}

namespace {

// One sendmsg of `pieces` from their byte `from` on, as a send(): -1 with
// errno EAGAIN when the socket takes nothing now.
ssize_t SendPieces(int fd, const WirePieces& pieces, size_t from) {
  std::array<iovec, 8> iov;
  size_t n = 0;
  for (const absl::Span<const char>& p : pieces) {
    if (from >= p.size()) {
      from -= p.size();
      continue;
    }
    if (n == iov.size()) break;  // the rest goes in the next call
    iov[n].iov_base = const_cast<char*>(p.data() + from);
    iov[n].iov_len = p.size() - from;
    ++n;
    from = 0;
  }
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = n;
  const ssize_t r = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  // A send never returns 0 for a nonzero length; keep 0 meaning "closed"
  // for reads only.
  if (r == 0) errno = EAGAIN;
  return r == 0 ? -1 : r;
}

size_t PiecesBytes(const WirePieces& pieces) {
  size_t n = 0;
  for (const absl::Span<const char>& p : pieces) n += p.size();
  return n;
}

}  // namespace

IoOutcome WriteGatheredFully(int fd, const WirePieces& pieces, size_t from, absl::Time deadline,
                             absl::Duration stall, size_t* moved, int* error) {
  const size_t total = PiecesBytes(pieces);
  return MoveFully(
      fd, total > from ? total - from : 0, POLLOUT, deadline, stall, moved, error,
      [fd, &pieces, from](size_t off, size_t) { return SendPieces(fd, pieces, from + off); });
}

IoOutcome WriteGatheredNow(int fd, const WirePieces& pieces, size_t from, size_t* moved,
                           int* error) {
  // A deadline already past: the loop ends as soon as the socket is full.
  return WriteGatheredFully(fd, pieces, from, absl::InfinitePast(), absl::ZeroDuration(), moved,
                            error);
}

IoOutcome WriteFully(int fd, const void* buf, size_t n, absl::Time deadline, absl::Duration stall,
                     size_t* moved, int* error) {
  return WriteGatheredFully(fd, {absl::Span<const char>(static_cast<const char*>(buf), n)}, 0,
                            deadline, stall, moved, error);
}

bool PrepareSideChannelSocket(int fd) {
  const int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) return false;
  const int flags = fcntl(fd, F_GETFL, 0);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

int ConnectTcp(const std::string& host, int port, absl::Time give_up, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) {
    *why = gai_strerror(rc);
    return -1;
  }
  int connected = -1;
  for (addrinfo* a = res; a != nullptr && connected < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0 || !PrepareSideChannelSocket(fd)) {
      *why = ErrnoText(errno);
      if (fd >= 0) close(fd);
      continue;
    }
    int err = connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    while (err == EINPROGRESS || err == EINTR) {
      const absl::Duration left = give_up - absl::Now();
      if (left <= absl::ZeroDuration()) {
        err = ETIMEDOUT;
        break;
      }
      pollfd pfd{fd, POLLOUT, 0};
      const int p = poll(
          &pfd, 1,
          static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)))));
      if (p < 0 && errno == EINTR) continue;
      if (p <= 0) {
        err = p == 0 ? ETIMEDOUT : errno;
        break;
      }
      socklen_t len = sizeof(err);
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
    if (err == 0) {
      connected = fd;
    } else {
      *why = ErrnoText(err);
      close(fd);
    }
  }
  freeaddrinfo(res);
  return connected;
}

}  // namespace distflow
