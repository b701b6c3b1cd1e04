#include "distflow/monitoring/status_server.h"

#include <sys/socket.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distflow/core/constant_time.h"
#include "distflow/core/status.h"
#include "distflow/monitoring/http_task_queue.h"
#include "httplib.h"

namespace distflow {
namespace {

constexpr size_t kMaxBodyBytes = 64 << 10;
constexpr time_t kIoTimeoutSeconds = 5;
constexpr size_t kThreads = 4;
constexpr size_t kMaxWaiting = 16;

bool Authorized(const httplib::Request& req, const std::string& token) {
  if (token.empty()) return true;
  const std::string header = req.get_header_value("Authorization");
  if (absl::StartsWith(header, "Bearer ") && ConstantTimeEquals(header.substr(7), token))
    return true;
  return req.has_param("token") && ConstantTimeEquals(req.get_param_value("token"), token);
}

}  // namespace

absl::StatusOr<std::unique_ptr<StatusServer>> StatusServer::Start(
    const StatusServerOptions& options, std::map<std::string, StatusPage> pages) {
  if (options.port < 0 || options.port > 65535) {
    return errors::InvalidArgument("status port ", options.port, " is not in [0, 65535]");
  }
  std::unique_ptr<StatusServer> s(new StatusServer);
  s->server_ = std::make_unique<httplib::Server>();
  httplib::Server& server = *s->server_;
  // At most kThreads connections served and kMaxWaiting waiting: a flood
  // of idle connections waits in the kernel's backlog, holding no file of
  // this process.
  server.new_task_queue = [] { return new BoundedHttpTaskQueue(kThreads, kMaxWaiting); };
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, which
  // would let a second process share a port already held.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.set_payload_max_length(kMaxBodyBytes);
  // One request per connection ("Connection: close"): an idle keep-alive
  // connection would hold one of the few threads, and a browser reusing a
  // connection the server was closing sees a failed request.
  server.set_keep_alive_max_count(1);
  server.set_read_timeout(kIoTimeoutSeconds, 0);
  server.set_write_timeout(kIoTimeoutSeconds, 0);
  const std::string token = options.token;
  for (auto& [path, page] : pages) {
    server.Get(
        path, [token, page = std::move(page)](const httplib::Request& req, httplib::Response& res) {
          if (!Authorized(req, token)) {
            res.status = 401;
            res.set_content(
                "this page needs the cluster's token: send \"Authorization: Bearer "
                "TOKEN\" or add ?token=TOKEN\n",
                "text/plain; charset=utf-8");
            return;
          }
          res.set_header("Cache-Control", "no-store");
          res.set_content(page.render(), page.content_type.c_str());
        });
  }
  const std::string address = absl::StrCat(options.bind, ":", options.port);
  if (options.port == 0) {
    s->port_ = server.bind_to_any_port(options.bind);
    if (s->port_ <= 0) {
      return errors::Unavailable("cannot bind the status server to ", address);
    }
  } else {
    if (!server.bind_to_port(options.bind, options.port)) {
      return errors::Unavailable("cannot bind the status server to ", address,
                                 " (held by another process, or not an address of this host)");
    }
    s->port_ = options.port;
  }
  s->thread_ = std::thread([&server] { server.listen_after_bind(); });
  return s;
}

StatusServer::~StatusServer() {
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace distflow
