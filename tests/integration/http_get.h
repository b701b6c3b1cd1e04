// Plain HTTP/1.1 requests for tests, over a loopback socket: status code,
// headers and body of one request (GET, or any method with a body), with a
// 5 s deadline on every socket operation (`timeout_seconds` when given).
// Status -1 when the server cannot be reached or answers no HTTP.
#ifndef DISTFLOW_TESTS_INTEGRATION_HTTP_GET_H_
#define DISTFLOW_TESTS_INTEGRATION_HTTP_GET_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace distflow {

struct HttpResponse {
  int status = -1;
  std::string headers, body;
};

inline HttpResponse HttpRequest(int port, const std::string& method, const std::string& path,
                                const std::string& body, const std::string& extra_headers = "",
                                int timeout_seconds = 5) {
  HttpResponse r;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return r;
  timeval tv{timeout_seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return r;
  }
  std::string req =
      method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + extra_headers;
  if (method != "GET") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  for (size_t sent = 0; sent < req.size();) {
    const ssize_t n = send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer (413) before reading it all
    sent += static_cast<size_t>(n);
  }
  std::string all;
  char buf[16384];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) all.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t end = all.find("\r\n\r\n");
  if (all.compare(0, 9, "HTTP/1.1 ") != 0 || end == std::string::npos) return r;
  r.status = std::stoi(all.substr(9, 3));
  r.headers = all.substr(0, end);
  r.body = all.substr(end + 4);
  return r;
}

inline HttpResponse HttpGet(int port, const std::string& path,
                            const std::string& extra_headers = "") {
  return HttpRequest(port, "GET", path, "", extra_headers);
}

inline HttpResponse HttpPost(int port, const std::string& path, const std::string& body,
                             const std::string& extra_headers = "") {
  return HttpRequest(port, "POST", path, body, extra_headers);
}

// Opens `n` TCP connections to loopback:`port` that never send a byte (a
// flood of idle connections); the caller closes the returned descriptors.
// Fewer when the process runs out of files.
inline std::vector<int> OpenIdleConnections(int port, int n) {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) break;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));  // in progress
    fds.push_back(fd);
  }
  return fds;
}

}  // namespace distflow

#endif  // DISTFLOW_TESTS_INTEGRATION_HTTP_GET_H_
