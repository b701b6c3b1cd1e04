// Loopback sockets for the transport tests: a port nothing listens on (as
// of the call), a blocking connection to a port, a read until the peer
// closes, and both ends of one connection.
#ifndef DISTFLOW_TESTS_DISTRIBUTED_RUNTIME_LOOPBACK_SOCKET_H_
#define DISTFLOW_TESTS_DISTRIBUTED_RUNTIME_LOOPBACK_SOCKET_H_

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "distflow/distributed_runtime/rpc/side_channel_wire.h"
#include "gtest/gtest.h"

namespace distflow {
namespace test {

inline sockaddr_in LoopbackAddress(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// A port of 127.0.0.1 the kernel just handed out and nothing holds now.
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = LoopbackAddress(0);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// A blocking socket connected to 127.0.0.1:port, or -1.
inline int Dial(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = LoopbackAddress(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads until the peer closes; the bytes read. Gives up (returning what it
// has, with *closed false) after 20 s so a bug cannot hang the test.
inline std::string ReadUntilClosed(int fd, bool* closed) {
  std::string out;
  *closed = false;
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, 20000) != 1) return out;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      *closed = true;
      return out;
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

// A TCP connection on loopback: the reading end non-blocking, as the side
// channel's sockets are; the writing end blocking.
struct TcpPair {
  TcpPair() {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = LoopbackAddress(0);
    EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listener, 1), 0);
    socklen_t len = sizeof(addr);
    getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
    writer = Dial(ntohs(addr.sin_port));
    reader = accept(listener, nullptr, nullptr);
    close(listener);
    EXPECT_TRUE(PrepareSideChannelSocket(reader));
  }
  ~TcpPair() {
    close(reader);
    close(writer);
  }
  TcpPair(const TcpPair&) = delete;
  TcpPair& operator=(const TcpPair&) = delete;
  int reader = -1;
  int writer = -1;
};

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_DISTRIBUTED_RUNTIME_LOOPBACK_SOCKET_H_
