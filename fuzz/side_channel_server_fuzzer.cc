// What a peer sends to the tensor side channel's port before it has shown a
// valid ticket (rpc/side_channel_server.h): the input's bytes go to a real
// SideChannelServer on loopback over a fresh TCP connection, after which the
// peer stops sending. Byte 0 of the input chooses what is spliced in: bit 0
// puts the request magic at the start, bit 1 a ticket the server really
// offered (for a 4 KiB tensor). The server must close the connection within
// its timeouts (a hang aborts, naming the input); when the bytes are exactly
// one valid request, the reply must be code 0 and the tensor's own bytes.
// Pushes that follow a hello reach a sink that decodes them.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "distflow/distributed_runtime/rpc/grpc_tensor_coding.h"
#include "distflow/distributed_runtime/rpc/side_channel_server.h"
#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "distflow/framework/tensor.h"
#include "fuzz_limits.h"

namespace distflow {
namespace {

constexpr int kFloats = 1024;
// Longer than the server's first-request timeout (250 ms) and a reply's
// write: a connection still open after this is a hang.
constexpr int kCloseWithinMs = 5000;

SideChannelServer& Server() {
  static SideChannelServer* server = [] {
    SideChannelServer::Options o;
    o.host = "127.0.0.1";
    o.min_bytes = 0;
    o.tickets.max_tickets = 1 << 16;
    absl::StatusOr<std::unique_ptr<SideChannelServer>> s = SideChannelServer::Start(o);
    if (!s.ok()) {
      std::fprintf(stderr, "cannot start the side channel: %s\n", s.status().ToString().c_str());
      std::abort();
    }
    // Pushes (after a hello; the server has no token) are decoded as the
    // worker decodes them.
    (*s)->SetPushSink([](int64_t, const std::string&, absl::string_view payload) {
      grpc::Slice slice(payload.data(), payload.size());
      grpc::ByteBuffer bytes(&slice, 1);
      Tensor value;
      bool is_dead = false;
      int64_t send_start = 0;
      DecodeRecvTensorResponse(bytes, &value, &is_dead, &send_start).IgnoreError();
    });
    return s->release();
  }();
  return *server;
}

const Tensor& Payload() {
  static const Tensor* t = [] {
    auto* v = new Tensor(DT_FLOAT, TensorShape({kFloats}));
    for (int i = 0; i < kFloats; ++i) v->flat<float>()[i] = static_cast<float>(i) * 0.5f;
    return v;
  }();
  return *t;
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) std::abort();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) std::abort();
  return fd;
}

// Everything the server sends until it closes; aborts when it does not
// close within kCloseWithinMs.
std::string ReadUntilClosed(int fd) {
  std::string got;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kCloseWithinMs);
  char buf[8192];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      std::fprintf(stderr, "the side channel kept a connection open after its peer stopped\n");
      std::abort();
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return got;  // closed (or reset)
    got.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace
}  // namespace distflow

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace distflow;
  fuzz::SetFuzzLimits();
  if (size == 0 || size > 256) return 0;
  SideChannelServer& server = Server();
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::optional<SideChannelTicket> ticket;
  if ((data[0] & 2) != 0) {
    // Tickets the input did not redeem stay until they lapse; a full table
    // declines (as it would a real sender), and the input is skipped.
    ticket = server.Offer(Payload());
    if (!ticket.has_value()) return 0;
  }
  std::array<char, kSideChannelRequestBytes> request{};
  if ((data[0] & 1) != 0 || ticket.has_value()) {
    EncodeSideChannelRequest(ticket.value_or(SideChannelTicket{}), &request);
    const size_t from = (data[0] & 1) != 0 ? 0 : 8;  // the magic, the ticket or both
    const size_t to = ticket.has_value() ? kSideChannelRequestBytes : 8;
    if (bytes.size() < to) bytes.resize(to);
    std::memcpy(bytes.data() + from, request.data() + from, to - from);
  }
  const int fd = Connect(server.port());
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server closed on a bad magic
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  const std::string reply = ReadUntilClosed(fd);
  close(fd);

  const bool one_valid_request = (data[0] & 3) == 3 && bytes.size() == kSideChannelRequestBytes;
  if (one_valid_request) {
    std::array<char, kSideChannelReplyHeaderBytes> head{};
    SideChannelReplyHeader header;
    if (reply.size() != kSideChannelReplyHeaderBytes + Payload().TotalBytes()) std::abort();
    std::memcpy(head.data(), reply.data(), head.size());
    if (!DecodeSideChannelReplyHeader(head, &header) || header.code != absl::StatusCode::kOk ||
        header.ticket != *ticket || header.payload_bytes != Payload().TotalBytes() ||
        std::memcmp(reply.data() + head.size(), Payload().raw_data(), Payload().TotalBytes()) !=
            0) {
      std::fprintf(stderr, "a valid request did not get the tensor's bytes back\n");
      std::abort();
    }
  }
  return 0;
}
