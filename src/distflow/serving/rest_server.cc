#include "distflow/serving/rest_server.h"

#include <sys/socket.h>

#include <exception>
#include <new>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/constant_time.h"
#include "distflow/core/status.h"
#include "distflow/monitoring/http_task_queue.h"
#include "httplib.h"

namespace distflow {
namespace {

constexpr size_t kKeepAliveMaxRequests = 1000;

void SetReply(const HttpReply& reply, httplib::Response& res) {
  res.status = reply.status;
  res.set_content(reply.body, reply.content_type.c_str());
}

bool Authorized(const httplib::Request& req, const std::string& token) {
  if (token.empty()) return true;
  const std::string header = req.get_header_value("Authorization");
  return absl::StartsWith(header, "Bearer ") && ConstantTimeEquals(header.substr(7), token);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RestServer>> RestServer::Start(const RestServerOptions& options,
                                                              RestHandler handler) {
  if (options.port < 0 || options.port > 65535) {
    return errors::InvalidArgument("REST API port ", options.port, " is not in [0, 65535]");
  }
  if (options.num_threads < 1 || options.max_body_bytes < 1 || options.io_timeout_seconds < 1 ||
      options.keep_alive_seconds < 1) {
    return errors::InvalidArgument(
        "the REST server's threads, body limit, I/O timeout and keep-alive must be positive");
  }
  std::unique_ptr<RestServer> s(new RestServer);
  s->server_ = std::make_unique<httplib::Server>();
  httplib::Server& server = *s->server_;
  const int threads = options.num_threads;
  // At most `threads` connections served and as many again waiting: a
  // flood of connections waits in the kernel's backlog, holding no file of
  // this process (cpp-httplib's own pool queues every one it accepts).
  server.new_task_queue = [threads] {
    return new BoundedHttpTaskQueue(static_cast<size_t>(threads), static_cast<size_t>(threads));
  };
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, which
  // would let a second process share a port already held.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // A reply goes out as headers, then body: without TCP_NODELAY the body
  // waits for the client's delayed ACK of the headers (about 40 ms).
  server.set_tcp_nodelay(true);
  server.set_payload_max_length(static_cast<size_t>(options.max_body_bytes));
  server.set_read_timeout(options.io_timeout_seconds, 0);
  server.set_write_timeout(options.io_timeout_seconds, 0);
  server.set_keep_alive_timeout(options.keep_alive_seconds);
  server.set_keep_alive_max_count(kKeepAliveMaxRequests);

  const std::string token = options.token;
  const int64_t max_body = options.max_body_bytes;
  auto answer = [token, handler](const httplib::Request& req, absl::string_view body,
                                 httplib::Response& res) {
    if (!Authorized(req, token)) {
      SetReply(ErrorReply(absl::UnauthenticatedError(
                   "this server needs its token: send \"Authorization: Bearer TOKEN\"")),
               res);
      return;
    }
    SetReply(handler(req.method, req.path, body), res);
  };
  server.Get(".*", [answer](const httplib::Request& req, httplib::Response& res) {
    answer(req, "", res);
  });
  // POST bodies are read here, whatever their Content-Type: the library
  // would parse an application/x-www-form-urlencoded body (what `curl -d`
  // sends, as in TF Serving's examples) as a form and refuse one over 8 KiB.
  server.Post(".*", [answer, max_body](const httplib::Request& req, httplib::Response& res,
                                       const httplib::ContentReader& read) {
    std::string body;
    const bool complete = read([&body](const char* data, size_t n) {
      body.append(data, n);
      return true;
    });
    if (!complete) {
      const bool too_large = res.status == 413;
      SetReply(
          ErrorReply(too_large
                         ? errors::ResourceExhausted(
                               "the request body is larger than the limit of ", max_body, " bytes")
                         : errors::InvalidArgument("the request body could not be read")),
          res);
      if (too_large) res.status = 413;
      return;
    }
    answer(req, body, res);
  });
  // The library's own refusals (a body too large, an unknown method, a
  // request it cannot parse) get TF Serving's error JSON too.
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [max_body](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        absl::Status s;
        if (res.status == 413) {
          s = errors::ResourceExhausted("the request body is larger than the limit of ", max_body,
                                        " bytes");
        } else if (res.status == 404 || res.status == 405) {
          s = errors::NotFound("Malformed request: ", req.method, " ", req.path.substr(0, 200));
        } else {
          s = errors::InvalidArgument("malformed HTTP request (", res.status, ")");
        }
        const int status = res.status;
        SetReply(ErrorReply(s), res);
        res.status = status;
        return httplib::Server::HandlerResponse::Handled;
      }));
  server.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        absl::Status s = errors::Internal("unexpected exception");
        try {
          std::rethrow_exception(ep);
        } catch (const std::bad_alloc&) {
          s = errors::ResourceExhausted("out of memory");
        } catch (const std::exception& e) {
          s = errors::Internal("unexpected exception: ", e.what());
        } catch (...) {
        }
        SetReply(ErrorReply(s), res);
      });

  const std::string address = absl::StrCat(options.bind, ":", options.port);
  if (options.port == 0) {
    s->port_ = server.bind_to_any_port(options.bind);
    if (s->port_ <= 0) return errors::Unavailable("cannot bind the REST API to ", address);
  } else {
    if (!server.bind_to_port(options.bind, options.port)) {
      return errors::Unavailable("cannot bind the REST API to ", address,
                                 " (held by another process, or not an address of this host)");
    }
    s->port_ = options.port;
  }
  s->thread_ = std::thread([&server] { server.listen_after_bind(); });
  return s;
}

RestServer::~RestServer() {
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace distflow
