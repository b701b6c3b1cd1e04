#include "distflow/distributed_runtime/rpc/side_channel_server.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "distflow/core/constant_time.h"
#include "distflow/core/errno_text.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

// How often the accept loop wakes to drop lapsed tickets and join
// finished connections when nothing else wakes it.
constexpr int kHousekeepingMs = 1000;
// An error reply is tiny; a peer that does not take it in this long is
// dropped.
constexpr absl::Duration kErrorReplyTimeout = absl::Seconds(1);

// A listening socket on an ephemeral port of `host`, IPv4 first (so that
// "localhost" listens where "127.0.0.1" dials), or -1 with *why set.
int Listen(const std::string& host, std::string* why) {
  const bool any = host.empty() || host == "0.0.0.0" || host == "::";
  for (const int family : {AF_INET, AF_UNSPEC}) {
    addrinfo hints{};
    hints.ai_family = any ? (host == "::" ? AF_INET6 : AF_INET) : family;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const int rc = getaddrinfo(any ? nullptr : host.c_str(), "0", &hints, &res);
    if (rc != 0) {
      *why = gai_strerror(rc);
      continue;
    }
    for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
      const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        *why = ErrnoText(errno);
        continue;
      }
      if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0) {
        freeaddrinfo(res);
        return fd;
      }
      *why = ErrnoText(errno);
      close(fd);
    }
    freeaddrinfo(res);
  }
  return -1;
}

int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SideChannelServer>> SideChannelServer::Start(Options options) {
  std::unique_ptr<SideChannelServer> s(new SideChannelServer(std::move(options)));
  std::string why;
  s->listen_fd_ = Listen(s->options_.host, &why);
  if (s->listen_fd_ < 0 || (s->port_ = BoundPort(s->listen_fd_)) == 0) {
    return errors::Unavailable("cannot listen for the tensor side channel on ", s->options_.host,
                               ": ", why);
  }
  s->wake_ = EventFd::Make();
  if (s->wake_ == nullptr) {
    return errors::Unavailable("eventfd for the tensor side channel: ", ErrnoText(errno));
  }
  SideChannelServer* raw = s.get();
  s->acceptor_ = std::thread([raw] { raw->AcceptLoop(); });
  return s;
}

SideChannelServer::~SideChannelServer() {
  Stop();
  if (acceptor_.joinable()) acceptor_.join();
  // No thread is started once the acceptor has ended.
  std::list<Connection> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(connections_);
  }
  for (Connection& c : left) c.thread.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void SideChannelServer::Stop() {
  if (stopped_.exchange(true)) return;
  // No longer listening: a connection made now is refused at once, where
  // one left in the backlog would wait for an answer that never comes.
  if (listen_fd_ >= 0) shutdown(listen_fd_, SHUT_RDWR);
  if (wake_ != nullptr) wake_->Signal();
  absl::MutexLock lock(&mu_);
  for (Connection& c : connections_) {
    if (c.fd >= 0) shutdown(c.fd, SHUT_RDWR);
  }
}

std::optional<SideChannelTicket> SideChannelServer::Offer(const Tensor& tensor) {
  if (stopped_.load() || IsRefType(tensor.dtype()) || DataTypeSize(tensor.dtype()) == 0 ||
      tensor.TotalBytes() < options_.min_bytes) {
    return std::nullopt;
  }
  return tickets_.Issue(tensor);
}

void SideChannelServer::AcceptLoop() {
  while (!stopped_.load()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_->fd(), POLLIN, 0}};
    const int p = poll(fds, 2, kHousekeepingMs);
    tickets_.Expire();
    Reap();
    if (p <= 0 || (fds[0].revents & POLLIN) == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;  // the peer gave up, or out of descriptors: next round
    absl::MutexLock lock(&mu_);
    const bool room =
        live_ - evicted_ < options_.max_connections || EvictOldestUnauthenticatedLocked();
    std::shared_ptr<EventFd> wake = stopped_.load() || !room ? nullptr : EventFd::Make();
    if (wake == nullptr || !PrepareSideChannelSocket(fd)) {
      close(fd);
      continue;
    }
    ++live_;
    connections_.emplace_back();
    Connection* c = &connections_.back();
    c->fd = fd;
    c->wake = std::move(wake);
    c->thread = std::thread([this, c] { Serve(c); });
  }
}

bool SideChannelServer::EvictOldestUnauthenticatedLocked() {
  // connections_ is in the order of accept.
  for (Connection& c : connections_) {
    if (c.done || c.authenticated || c.evicted || c.fd < 0) continue;
    c.evicted = true;
    ++evicted_;
    shutdown(c.fd, SHUT_RDWR);
    return true;
  }
  return false;
}

void SideChannelServer::Reap() {
  std::list<Connection> finished;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), connections_, it);
      it = next;
    }
  }
  for (Connection& c : finished) c.thread.join();
}

void SideChannelServer::SetKeyedSource(KeyedSource source) {
  absl::MutexLock lock(&mu_);
  keyed_source_ = std::move(source);
}

void SideChannelServer::SetPushSink(PushSink sink) {
  absl::MutexLock lock(&mu_);
  push_sink_ = std::move(sink);
}

void SideChannelServer::SetRouteListener(RouteListener listener) {
  absl::MutexLock lock(&mu_);
  route_listener_ = std::move(listener);
}

void SideChannelServer::MarkAuthenticated(Connection* c) {
  absl::MutexLock lock(&mu_);
  c->authenticated = true;
}

void SideChannelServer::Serve(Connection* c) {
  const int fd = c->fd;  // stays open until this function closes it
  absl::Duration wait = options_.first_request_timeout;
  bool greeted = false;
  while (!stopped_.load()) {
    std::array<char, kSideChannelRequestBytes> request;
    size_t moved = 0;
    int error = 0;
    const absl::Time deadline = absl::Now() + wait;
    if (ReadFully(fd, request.data(), request.size(), deadline, wait, &moved, &error) !=
        IoOutcome::kDone) {
      break;
    }
    SideChannelRequestHead head;
    if (!DecodeSideChannelRequestHead(request, &head)) break;  // not our protocol
    bool keep = false;
    switch (head.kind) {
      case SideChannelRequestHead::Kind::kTicket:
        keep = ServeTicket(c, head.ticket);
        break;
      case SideChannelRequestHead::Kind::kHello:
        keep = ServeHello(c, head.length, &greeted);
        if (keep) c->sender_port = head.sender_port;
        break;
      case SideChannelRequestHead::Kind::kPush:
        keep = ServePush(c, head, greeted);
        break;
      case SideChannelRequestHead::Kind::kKeyed:
        keep = ServeKeyed(c, head, greeted);
        break;
    }
    if (!keep) break;
    wait = options_.idle_timeout;
  }
  absl::MutexLock lock(&mu_);
  close(fd);
  c->fd = -1;
  c->wake.reset();  // closed once no keyed answer holds it either
  c->done = true;
  --live_;
  if (c->evicted) --evicted_;
}

namespace {

// Sends an error reply (the connection closes after it).
void SendError(int fd, const SideChannelTicket& ticket, const absl::Status& status) {
  SideChannelReplyHeader header;
  header.ticket = ticket;
  std::string message(status.message().substr(0, kSideChannelMaxMessage));
  header.code = status.code();
  header.message_bytes = static_cast<uint32_t>(message.size());
  std::array<char, kSideChannelReplyHeaderBytes> head;
  EncodeSideChannelReplyHeader(header, &head);
  size_t moved = 0;
  int error = 0;
  const absl::Time give_up = absl::Now() + kErrorReplyTimeout;
  if (WriteFully(fd, head.data(), head.size(), give_up, kErrorReplyTimeout, &moved, &error) ==
      IoOutcome::kDone) {
    WriteFully(fd, message.data(), message.size(), give_up, kErrorReplyTimeout, &moved, &error);
  }
}

// How often a keyed receive's wait looks at the receiver and the server,
// and how long it waits for a cancelled source to answer.
constexpr absl::Duration kKeyedPoll = absl::Milliseconds(100);
constexpr absl::Duration kKeyedCancelGrace = absl::Seconds(5);

}  // namespace

bool SideChannelServer::ServeTicket(Connection* c, const SideChannelTicket& ticket) {
  const int fd = c->fd;
  absl::StatusOr<Tensor> tensor = tickets_.Redeem(ticket);
  if (!tensor.ok()) {
    SendError(fd, ticket, tensor.status());
    return false;
  }
  if (!c->authenticated) MarkAuthenticated(c);
  SideChannelReplyHeader header;
  header.ticket = ticket;
  header.payload_bytes = tensor->TotalBytes();
  std::array<char, kSideChannelReplyHeaderBytes> head;
  EncodeSideChannelReplyHeader(header, &head);
  // The payload goes from the tensor's own buffer; a receiver that stops
  // reading is dropped after the stall time, however large the tensor.
  size_t moved = 0;
  int error = 0;
  const absl::Time no_deadline = absl::InfiniteFuture();
  // Counted before the bytes go, so the receiver never has its tensor
  // before the count does.
  fetches_served_.fetch_add(1);
  return WriteFully(fd, head.data(), head.size(), no_deadline, options_.stall_timeout, &moved,
                    &error) == IoOutcome::kDone &&
         WriteFully(fd, tensor->raw_data(), header.payload_bytes, no_deadline,
                    options_.stall_timeout, &moved, &error) == IoOutcome::kDone;
}

bool SideChannelServer::ServeHello(Connection* c, uint32_t token_bytes, bool* greeted) {
  std::string token(token_bytes, '\0');
  size_t moved = 0;
  int error = 0;
  if (ReadFully(c->fd, token.data(), token.size(), absl::Now() + kErrorReplyTimeout,
                kErrorReplyTimeout, &moved, &error) != IoOutcome::kDone) {
    return false;
  }
  if (!ConstantTimeEquals(token, options_.token)) {
    SendError(c->fd, SideChannelTicket{},
              absl::UnauthenticatedError("the tensor side channel's hello did not carry the "
                                         "cluster's token"));
    return false;
  }
  *greeted = true;
  if (!c->authenticated) MarkAuthenticated(c);
  return true;
}

bool SideChannelServer::ServeKeyed(Connection* c, const SideChannelRequestHead& head,
                                   bool greeted) {
  const int fd = c->fd;
  std::string key(head.length, '\0');
  size_t moved = 0;
  int error = 0;
  if (ReadFully(fd, key.data(), key.size(), absl::Now() + kErrorReplyTimeout, kErrorReplyTimeout,
                &moved, &error) != IoOutcome::kDone) {
    return false;
  }
  if (!greeted) {
    SendError(fd, SideChannelTicket{},
              absl::UnauthenticatedError("a keyed receive on the tensor side channel must follow a "
                                         "hello with the cluster's token"));
    return false;
  }
  if (c->sender_port > 0 && !c->route_told) TellRoute(c, key);
  KeyedSource source;
  {
    absl::MutexLock lock(&mu_);
    source = keyed_source_;
  }
  if (source == nullptr) {
    SendError(fd, SideChannelTicket{},
              errors::Unimplemented("this tensor side channel answers no keyed receives"));
    return false;
  }
  auto answer = std::make_shared<KeyedAnswer>(fd, c->wake, &keyed_served_);
  source(head.step_id, key, answer->cm(),
         [answer](const absl::Status& s, grpc::ByteBuffer reply, Tensor follows) {
           answer->Done(s, std::move(reply), std::move(follows));
         });
  return AwaitKeyedAnswer(c, answer.get(), head, key);
}

bool SideChannelServer::AwaitKeyedAnswer(Connection* c, KeyedAnswer* answer,
                                         const SideChannelRequestHead& head,
                                         const std::string& key) {
  const absl::Time give_up = head.timeout_ms > 0 ? absl::Now() + absl::Milliseconds(head.timeout_ms)
                                                 : absl::InfiniteFuture();
  absl::Status why_cancelled;
  absl::Time cancelled_at = absl::InfiniteFuture();
  for (;;) {
    switch (answer->state()) {
      case KeyedAnswer::State::kSent:
        return true;
      case KeyedAnswer::State::kBroken:
        return false;
      case KeyedAnswer::State::kHandedBack: {
        // A tensor that came as the wait was cancelled is sent all the same.
        const absl::Status status = answer->status();
        if (!status.ok()) {
          SendError(c->fd, SideChannelTicket{}, why_cancelled.ok() ? status : why_cancelled);
          return false;
        }
        return answer->SendRest(options_.stall_timeout);
      }
      case KeyedAnswer::State::kWaiting:
        break;
    }
    // Past the deadline the wait goes on for the cancelled source's answer,
    // in whole slices: a zero slice would spin.
    const absl::Time now = absl::Now();
    const absl::Duration slice = now < give_up ? std::min(kKeyedPoll, give_up - now) : kKeyedPoll;
    pollfd fds[2] = {{c->fd, POLLIN | POLLRDHUP, 0}, {c->wake->fd(), POLLIN, 0}};
    const int p =
        poll(fds, 2,
             static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(slice, absl::Milliseconds(1)))));
    if (p < 0 && errno != EINTR) {
      answer->Abandon();
      return false;
    }
    if (p > 0) {
      if (fds[1].revents != 0) c->wake->Drain();
      // Before its reply has gone, the receiver only speaks to hang up.
      if (fds[0].revents != 0 && answer->state() == KeyedAnswer::State::kWaiting) {
        answer->Abandon();
        return false;  // nobody to answer
      }
      continue;
    }
    if (!why_cancelled.ok()) {
      // The source did not answer its cancellation: leave it the state.
      if (absl::Now() - cancelled_at > kKeyedCancelGrace) {
        answer->Abandon();
        return false;
      }
      continue;
    }
    if (stopped_.load()) {
      why_cancelled = errors::Cancelled("the tensor side channel is stopping");
    } else if (absl::Now() >= give_up) {
      why_cancelled = errors::DeadlineExceeded("keyed receive of '", key, "' (step ", head.step_id,
                                               ") found no tensor within ", head.timeout_ms, " ms");
    } else {
      continue;
    }
    cancelled_at = absl::Now();
    answer->cm()->StartCancel();
  }
}

void SideChannelServer::TellRoute(Connection* c, const std::string& key) {
  c->route_told = true;
  RouteListener listener;
  {
    absl::MutexLock lock(&mu_);
    listener = route_listener_;
  }
  if (listener == nullptr) return;
  sockaddr_storage peer{};
  socklen_t len = sizeof(peer);
  if (getpeername(c->fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return;
  char host[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&peer), len, host, sizeof(host), nullptr, 0,
                  NI_NUMERICHOST) != 0) {
    return;
  }
  listener(key, host, c->sender_port);
}

bool SideChannelServer::ServePush(Connection* c, const SideChannelRequestHead& head, bool greeted) {
  // The key and payload are short (bounded by the head's decoding): read
  // them whole, within the time an error reply gets.
  std::string bytes(size_t{head.length} + head.payload_bytes, '\0');
  size_t moved = 0;
  int error = 0;
  if (ReadFully(c->fd, bytes.data(), bytes.size(), absl::Now() + kErrorReplyTimeout,
                kErrorReplyTimeout, &moved, &error) != IoOutcome::kDone) {
    return false;
  }
  // A push gets no reply: one that did not follow a hello closes the
  // connection.
  if (!greeted) return false;
  pushes_received_.fetch_add(1);
  PushSink sink;
  {
    absl::MutexLock lock(&mu_);
    sink = push_sink_;
  }
  if (sink != nullptr) {
    sink(head.step_id, bytes.substr(0, head.length), absl::string_view(bytes).substr(head.length));
  }
  return true;
}

}  // namespace distflow
