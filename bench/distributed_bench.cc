// Tensor transfer between two `distflow server` processes, next to a plain
// TCP socket pair on loopback moving the same bytes in the same run, and the
// round-trip latency of a one-node RunStep. Prints medians.
//
//   distributed_bench [--min-kib 1] [--max-mib 256] [--reps 7]
//
// Transfer time for a size is the median step time of
//   big = Fill([n], 1) on task 0  ->  Size(big) on task 1
// minus the median of the same graph with both nodes on task 0, so the fill
// and the step overhead cancel and what is left is RecvTensor moving `big`.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "bench_util.h"
#include "distflow/common_runtime/session.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/graph/graph_io.h"

namespace distflow {
namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  pid_t pid = -1;
  int port = 0;
};

Child StartServer(const char* binary, const std::string& cluster, const std::string& job,
                  int task) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    const std::string t = std::to_string(task);
    execl(binary, binary, "server", "--cluster", cluster.c_str(), "--job", job.c_str(), "--task",
          t.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  Child c;
  c.pid = pid;
  FILE* f = fdopen(fds[0], "r");
  char line[256] = {0};
  if (fgets(line, sizeof(line), f) != nullptr) {
    std::string s(line);
    absl::SimpleAtoi(absl::StripAsciiWhitespace(s.substr(s.rfind(':') + 1)), &c.port);
  }
  fclose(f);
  return c;
}

void Stop(Child& c) {
  if (c.pid > 0) {
    kill(c.pid, SIGTERM);
    waitpid(c.pid, nullptr, 0);
  }
}

GraphDef TransferGraph(int64_t elements, bool remote) {
  const std::string consumer = remote ? "/job:worker/task:1" : "/job:worker/task:0";
  GraphDef g;
  // Unformatted: clang-format pads the raw strings, which puts spaces in the device name.
  // clang-format off
  std::string text = absl::StrCat(R"pb(
                                    node { name: "dims" op: "Const" device: "/job:worker/task:0"
                                           attr {
                                             key: "dtype"
                                             value { type: DT_INT64 }
                                           }
                                           attr { key: "value"
                                                  value { tensor { dtype: DT_INT64
                                                                   tensor_shape { dim { size: 1 } }
                                                                   int64_val:)pb",
                                  elements, R"pb(}
                                                 } } }
    node { name: "one" op: "Const" device: "/job:worker/task:0"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
    node { name: "big" op: "Fill" input: "dims" input: "one" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "index_type" value { type: DT_INT64 } } }
    node { name: "n" op: "Size" input: "big" device: ")pb",
                                  consumer, R"pb("
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "out_type" value { type: DT_INT64 } } }
  )pb");
  // clang-format on
  ParseGraphDefText(text, &g).IgnoreError();
  return g;
}

// Median seconds of one step fetching `fetch`.
double TimeSteps(Session* s, const std::string& fetch, int reps) {
  std::vector<Tensor> out;
  s->Run({}, {fetch}, {}, &out).IgnoreError();  // warm up (build, register)
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    absl::Status st = s->Run({}, {fetch}, {}, &out);
    if (!st.ok()) {
      std::fprintf(stderr, "step failed: %s\n", st.ToString().c_str());
      return -1;
    }
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return bench::Median(times);
}

// Median seconds to move `bytes` through a loopback TCP connection.
double TimeTcp(size_t bytes, int reps) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  listen(listener, 1);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int server = accept(listener, nullptr, nullptr);
  int one = 1;
  setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::vector<char> src(bytes, 1), dst(bytes);
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    std::thread writer([&] {
      size_t off = 0;
      while (off < bytes) {
        const ssize_t w = write(client, src.data() + off, bytes - off);
        if (w <= 0) break;
        off += w;
      }
    });
    size_t off = 0;
    while (off < bytes) {
      const ssize_t n = read(server, dst.data() + off, bytes - off);
      if (n <= 0) break;
      off += n;
    }
    writer.join();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  close(client);
  close(server);
  close(listener);
  return bench::Median(times);
}

int Main(int argc, char** argv) {
  int min_kib = 1;
  int max_mib = 256;
  int reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--min-kib") == 0) min_kib = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--max-mib") == 0) max_mib = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  Child w0 = StartServer(DISTFLOW_BINARY, "worker=127.0.0.1:0,127.0.0.1:0", "worker", 0);
  Child w1 = StartServer(DISTFLOW_BINARY, "worker=127.0.0.1:0,127.0.0.1:0", "worker", 1);
  if (w0.port == 0 || w1.port == 0) {
    std::fprintf(stderr, "servers did not start\n");
    return 1;
  }
  ConfigProto config;
  *config.mutable_cluster_def() =
      ClusterSpec::FromFlag(absl::StrCat("worker=127.0.0.1:", w0.port, ",127.0.0.1:", w1.port))
          ->def();
  SessionOptions opts;
  opts.target = absl::StrCat("grpc://127.0.0.1:", w0.port);
  opts.config = config;

  std::printf("RecvTensor between two server processes vs a loopback TCP socket (medians of %d)\n",
              reps);
  std::printf("%10s %12s %12s %12s %12s %8s\n", "size", "step_remote", "step_local", "transfer",
              "tcp", "ratio");
  for (size_t kib = std::max(1, min_kib); kib <= static_cast<size_t>(max_mib) * 1024; kib *= 4) {
    const int64_t elements = static_cast<int64_t>(kib) * 1024 / 4;
    auto remote = NewSession(opts);
    auto local = NewSession(opts);
    if (!remote.ok() || !local.ok()) return 1;
    (*remote)->Create(TransferGraph(elements, true)).IgnoreError();
    (*local)->Create(TransferGraph(elements, false)).IgnoreError();
    const int r = kib >= 65536 ? std::max(3, reps / 2) : reps;
    const double t_remote = TimeSteps(remote->get(), "n", r);
    const double t_local = TimeSteps(local->get(), "n", r);
    const double transfer = std::max(1e-9, t_remote - t_local);
    const double tcp = TimeTcp(kib * 1024, r);
    const std::string size =
        kib >= 1024 ? absl::StrCat(kib / 1024, " MiB") : absl::StrCat(kib, " KiB");
    std::printf("%10s %10.3fms %10.3fms %10.3fms %10.3fms %8.2f   (%.0f vs %.0f MB/s)\n",
                size.c_str(), t_remote * 1e3, t_local * 1e3, transfer * 1e3, tcp * 1e3,
                transfer / tcp, kib * 1024 / transfer / 1e6, kib * 1024 / tcp / 1e6);
    (*remote)->Close().IgnoreError();
    (*local)->Close().IgnoreError();
  }

  // Round trip of a one-node step through the master.
  auto s = NewSession(opts);
  (*s)->Create(bench::OneConstGraph("/job:worker/task:0")).IgnoreError();
  const double rtt = TimeSteps(s->get(), "c", 200);
  std::printf("one-node RunStep round trip: median %.1f us over 200 steps\n", rtt * 1e6);
  (*s)->Close().IgnoreError();
  Stop(w0);
  Stop(w1);
  return 0;
}

}  // namespace
}  // namespace distflow

int main(int argc, char** argv) { return distflow::Main(argc, argv); }
