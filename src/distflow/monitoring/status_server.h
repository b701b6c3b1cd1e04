// A small HTTP/1.1 server for the pages a process shows of itself (a status
// page, its JSON, Prometheus' /metrics), on threads of its own, through
// cpp-httplib. GET only; every page is rendered anew for each request.
//
// Bind rules as the RPC servers have them: it binds the address it is given
// (loopback by default), port 0 picks a free port. With a token, a request
// must carry it — "Authorization: Bearer TOKEN", or "?token=TOKEN" for a
// browser — or gets 401. Requests are bounded: a 64 KiB body, a 5 s read
// and write timeout, 4 threads, one request per connection, and at most
// 16 accepted connections waiting for a thread (more wait in the kernel's
// listen backlog, holding nothing of this process: monitoring/
// http_task_queue.h).
//
// Thread-safe; pages render on the server's threads, so their functions
// must be thread-safe. Destroying the server stops it and waits for its
// threads.
#ifndef DISTFLOW_MONITORING_STATUS_SERVER_H_
#define DISTFLOW_MONITORING_STATUS_SERVER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace httplib {
class Server;
}

namespace distflow {

struct StatusPage {
  std::string content_type;
  std::function<std::string()> render;
};

struct StatusServerOptions {
  std::string bind = "127.0.0.1";
  int port = 0;
  // Empty: no token asked.
  std::string token;
};

class StatusServer {
 public:
  // Serves `pages` by path ("/", "/api/status", "/metrics"). InvalidArgument
  // for a port outside [0, 65535]; Unavailable naming the address when it
  // cannot be bound (held by another process, or not an address here).
  static absl::StatusOr<std::unique_ptr<StatusServer>> Start(
      const StatusServerOptions& options, std::map<std::string, StatusPage> pages);
  ~StatusServer();
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;

  int port() const { return port_; }

 private:
  StatusServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_MONITORING_STATUS_SERVER_H_
