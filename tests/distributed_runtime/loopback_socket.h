// Loopback sockets for the transport tests: a port nothing listens on (as
// of the call) and a blocking connection to a port.
#ifndef DISTFLOW_TESTS_DISTRIBUTED_RUNTIME_LOOPBACK_SOCKET_H_
#define DISTFLOW_TESTS_DISTRIBUTED_RUNTIME_LOOPBACK_SOCKET_H_

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

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

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_DISTRIBUTED_RUNTIME_LOOPBACK_SOCKET_H_
