// The HTTP/1.1 server in front of the REST API, through cpp-httplib (the
// library the status pages use): every GET and POST goes to one handler,
// on a pool of threads of its own.
//
// Bounds, so that no client can wedge it: a body larger than
// max_body_bytes is refused (413) before it is read; every socket read and
// write has io_timeout; a keep-alive connection is closed after
// keep_alive_seconds idle or 1000 requests; at most num_threads accepted
// connections wait for a thread (more stay in the kernel's backlog). It binds the address it is
// given (loopback by default; port 0 picks a free port). With a token, a
// request must carry "Authorization: Bearer TOKEN" or gets 401. Every
// error reply, the library's own included, is TF Serving's
// {"error": "..."} JSON.
//
// Thread-safe; the handler runs on the server's threads, so it must be
// thread-safe. Destruction stops the server and waits for its threads.
#ifndef DISTFLOW_SERVING_REST_SERVER_H_
#define DISTFLOW_SERVING_REST_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distflow/serving/rest_api.h"

namespace httplib {
class Server;
}

namespace distflow {

struct RestServerOptions {
  std::string bind = "127.0.0.1";
  int port = 8501;
  // Threads answering requests; each holds one connection at a time.
  int num_threads = 16;
  // Empty: no token asked.
  std::string token;
  // A body of small numbers takes about 25 times its size in memory while
  // it is parsed and answered (a number is a 16-byte JSON value in a
  // growing array, then an element, then text again).
  int64_t max_body_bytes = 16 << 20;
  int io_timeout_seconds = 30;
  int keep_alive_seconds = 5;
};

using RestHandler = std::function<HttpReply(absl::string_view method, absl::string_view path,
                                            absl::string_view body)>;

class RestServer {
 public:
  // InvalidArgument for a port outside [0, 65535] or a non-positive bound;
  // Unavailable naming the address when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<RestServer>> Start(const RestServerOptions& options,
                                                           RestHandler handler);
  ~RestServer();
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  int port() const { return port_; }

 private:
  RestServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_SERVING_REST_SERVER_H_
