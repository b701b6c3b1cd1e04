// The floor for bench/serve_bench.sh: the REST server of `distflow serve`
// (serving/rest_server.h: cpp-httplib, the same threads, limits and
// keep-alive) answering every request with "{}" and doing nothing else.
// Prints "listening on HOST:PORT" and runs until SIGTERM or SIGINT.
//
//   http_floor [PORT] [THREADS]
#include <pthread.h>

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "distflow/serving/rest_server.h"

int main(int argc, char** argv) {
  distflow::RestServerOptions options;
  options.port = argc > 1 ? std::atoi(argv[1]) : 0;
  if (argc > 2) options.num_threads = std::atoi(argv[2]);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  auto server = distflow::RestServer::Start(
      options, [](absl::string_view, absl::string_view, absl::string_view) {
        distflow::HttpReply reply;
        reply.body = "{}";
        return reply;
      });
  if (!server.ok()) {
    std::cerr << "error: " << server.status() << std::endl;
    return 1;
  }
  std::cout << "listening on " << options.bind << ":" << (*server)->port() << std::endl;
  int sig = 0;
  sigwait(&stop, &sig);
  return 0;
}
