#include "distflow/distributed_runtime/rpc/side_channel_pusher.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "distflow/core/env.h"
#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"

namespace distflow {

SideChannelPusher::SideChannelPusher(Options options) : options_(std::move(options)) {}

SideChannelPusher::~SideChannelPusher() {
  absl::MutexLock lock(&mu_);
  for (auto& [task, r] : routes_) {
    absl::MutexLock route_lock(&r->mu);
    Close(r.get());
  }
}

void SideChannelPusher::Learn(const std::string& task, const std::string& host, int port) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<Route>& r = routes_[task];
  if (r != nullptr && r->host == host && r->port == port) return;
  // The old route's connection closes once a push using it is done.
  auto fresh = std::make_shared<Route>();
  fresh->host = host;
  fresh->port = port;
  if (r != nullptr) {
    absl::MutexLock route_lock(&r->mu);
    Close(r.get());
  }
  r = std::move(fresh);
}

void SideChannelPusher::Close(Route* r) {
  if (r->fd >= 0) close(r->fd);
  r->fd = -1;
  r->connected = false;
  r->greeted = false;
}

bool SideChannelPusher::Connect(Route* r) {
  if (r->fd < 0) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    if (getaddrinfo(r->host.c_str(), std::to_string(r->port).c_str(), &hints, &res) != 0) {
      return false;
    }
    const int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
    if (fd < 0 || !PrepareSideChannelSocket(fd)) {
      if (fd >= 0) close(fd);
      freeaddrinfo(res);
      return false;
    }
    const int err = connect(fd, res->ai_addr, res->ai_addrlen) == 0 ? 0 : errno;
    freeaddrinfo(res);
    if (err != 0 && err != EINPROGRESS) {
      close(fd);
      return false;
    }
    r->fd = fd;
    r->connected = err == 0;
    return r->connected;
  }
  if (r->connected) {
    // The receiver closes a connection idle for long: a readable or hung-up
    // socket (it never sends us anything) is one it closed.
    pollfd pfd{r->fd, POLLIN | POLLRDHUP, 0};
    if (poll(&pfd, 1, 0) != 0) {
      Close(r);
      return Connect(r);
    }
    return true;
  }
  pollfd pfd{r->fd, POLLOUT, 0};
  if (poll(&pfd, 1, 0) <= 0) return false;  // still in progress
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(r->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    Close(r);
    return false;
  }
  r->connected = true;
  return true;
}

bool SideChannelPusher::TryPush(const std::string& task, int64_t step_id, absl::string_view key,
                                const Tensor& value, bool is_dead) {
  if (key.empty() || key.size() > kSideChannelMaxKey) return false;
  if (!is_dead && value.TotalBytes() > options_.max_tensor_bytes) return false;
  std::shared_ptr<Route> r;
  {
    absl::MutexLock lock(&mu_);
    auto it = routes_.find(task);
    if (it == routes_.end()) return false;
    r = it->second;
  }
  // Another push on the connection: this one is asked for instead.
  if (!r->mu.TryLock()) return false;
  absl::Cleanup unlock = [&r] { r->mu.Unlock(); };
  if (!Connect(r.get())) return false;
  grpc::ByteBuffer payload;
  EncodeRecvTensorResponse(value, is_dead, NowMicros(), &payload);
  if (payload.Length() > kSideChannelMaxPush) return false;
  std::string frame;
  std::array<char, kSideChannelRequestBytes> head;
  if (!r->greeted) {
    EncodeSideChannelHello(static_cast<uint32_t>(options_.token.size()), 0, &head);
    frame.append(head.data(), head.size());
    frame += options_.token;
  }
  EncodeSideChannelPush(step_id, static_cast<uint32_t>(key.size()),
                        static_cast<uint32_t>(payload.Length()), &head);
  frame.append(head.data(), head.size());
  frame.append(key.data(), key.size());
  std::vector<grpc::Slice> slices;
  if (!payload.Dump(&slices).ok()) return false;
  for (const grpc::Slice& s : slices)
    frame.append(reinterpret_cast<const char*>(s.begin()), s.size());
  const ssize_t n = send(r->fd, frame.data(), frame.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n == static_cast<ssize_t>(frame.size())) {
    r->greeted = true;
    pushes_sent_.fetch_add(1);
    return true;
  }
  // Nothing went and the socket is only full: keep it. Part of a push, or
  // an error: the connection is spoilt.
  if (!(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) Close(r.get());
  return false;
}

}  // namespace distflow
