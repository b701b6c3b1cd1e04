// Tensor transfer between two `distflow server` processes, over each
// protocol asked for (grpc, grpc+verbs), next to a plain TCP socket pair on
// loopback and a memcpy moving the same bytes in the same run, and the
// round-trip latency of a one-node RunStep. Prints medians.
//
//   distributed_bench [--protocol grpc,grpc+verbs] [--side-channel on,off]
//                     [--tensor-push on,off] [--min-kib 1]
//                     [--max-mib 256] [--max-kib N] [--reps 7] [--rtt-steps 200]
//
// --max-kib, when given, bounds the sizes in KiB instead of --max-mib (one
// size alone: --min-kib 64 --max-kib 64, e.g. under a profiler).
//
// grpc runs once per --side-channel value: with the tensor side channel (the
// servers' default: large payloads over a TCP stream beside gRPC) and with
// `--tensor-side-channel off` (every byte over gRPC); with the side channel
// once per --tensor-push value (the servers' default: on).
//
// With grpc+verbs it also times the verbs channel alone between two
// processes (shared-memory provider): a receive of 1 KiB and of 64 MiB —
// request, write-with-immediate, tensor in the consumer's hands — next to a
// TCP ping-pong and memcpy of the same bytes.
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
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "bench_util.h"
#include "distflow/common_runtime/session.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "distflow/distributed_runtime/verbs/rdma_channel.h"
#include "distflow/distributed_runtime/verbs/shm_provider.h"
#include "distflow/graph/graph_io.h"
#include "distflow/worker_service.grpc.pb.h"
#include "launcher/server_child.h"

namespace distflow {
namespace {

using Clock = std::chrono::steady_clock;

using Child = ServerChild;

// A `distflow server` task, started as the program's own launchers start
// one (launcher/server_child.h); pid -1 when it did not start.
Child StartServer(const char* binary, const std::string& cluster, const std::string& job, int task,
                  const std::string& protocol, const std::string& side_channel,
                  const std::string& push) {
  absl::StatusOr<ServerChild> child =
      SpawnServer(binary, {"server", "--cluster", cluster, "--job", job, "--task",
                           std::to_string(task), "--protocol", protocol, "--tensor-side-channel",
                           side_channel, "--tensor-push", push});
  if (!child.ok()) {
    std::fprintf(stderr, "%s\n", child.status().ToString().c_str());
    return {};
  }
  return *child;
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

// Both ends of a loopback TCP connection, with TCP_NODELAY; closed when it
// goes.
struct TcpPair {
  int client = -1;
  int server = -1;
  TcpPair() {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
    listen(listener, 1);
    client = socket(AF_INET, SOCK_STREAM, 0);
    connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    server = accept(listener, nullptr, nullptr);
    close(listener);
    int one = 1;
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~TcpPair() {
    close(client);
    close(server);
  }
};

// Median seconds to move `bytes` through a loopback TCP connection.
double TimeTcp(size_t bytes, int reps) {
  TcpPair tcp;
  const int client = tcp.client;
  const int server = tcp.server;
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
  return bench::Median(times);
}

// Median seconds of memcpy of `bytes` between two warm buffers.
double TimeMemcpy(size_t bytes, int reps) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  std::vector<double> times;
  for (int r = 0; r < reps + 1; ++r) {
    const auto t0 = Clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    if (r > 0) times.push_back(t);  // the first touches the pages
  }
  volatile char sink = dst[bytes / 2];
  (void)sink;
  return bench::Median(times);
}

// Median seconds of half a loopback TCP round trip carrying `bytes` one way
// and one byte back.
double TimeTcpOneWay(size_t bytes, int reps) {
  TcpPair tcp;
  const int client = tcp.client;
  const int server = tcp.server;
  std::thread echo([&] {
    std::vector<char> buf(bytes);
    for (int r = 0; r < reps + 1; ++r) {
      size_t off = 0;
      while (off < bytes) {
        const ssize_t n = read(server, buf.data() + off, bytes - off);
        if (n <= 0) return;
        off += n;
      }
      if (write(server, buf.data(), 1) != 1) return;
    }
  });
  std::vector<char> src(bytes, 1);
  std::vector<double> times;
  for (int r = 0; r < reps + 1; ++r) {
    const auto t0 = Clock::now();
    size_t off = 0;
    while (off < bytes) {
      const ssize_t w = write(client, src.data() + off, bytes - off);
      if (w <= 0) break;
      off += w;
    }
    char c;
    if (read(client, &c, 1) != 1) break;
    if (r > 0) times.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / 2);
  }
  echo.join();
  return times.empty() ? -1 : bench::Median(times);
}

bool WriteMessage(int fd, const google::protobuf::MessageLite& m) {
  const std::string bytes = m.SerializeAsString();
  const uint32_t n = static_cast<uint32_t>(bytes.size());
  return write(fd, &n, 4) == 4 && write(fd, bytes.data(), n) == static_cast<ssize_t>(n);
}

bool ReadMessage(int fd, google::protobuf::MessageLite* m) {
  uint32_t n = 0;
  if (read(fd, &n, 4) != 4) return false;
  std::string bytes(n, '\0');
  size_t off = 0;
  while (off < n) {
    const ssize_t r = read(fd, bytes.data() + off, n - off);
    if (r <= 0) return false;
    off += r;
  }
  return m->ParseFromString(bytes);
}

constexpr char kBenchConsumer[] = "/job:bench/replica:0/task:0";
constexpr char kBenchProducer[] = "/job:bench/replica:0/task:1";

// The producer process of the channel timing: answers the start-up
// exchange on `fd`, then serves tensors of the size each key names
// ("bytes=N", floats) until `fd` closes.
int ServeChannel(int fd) {
  auto provider = ShmProvider::Create();
  if (!provider.ok()) return 1;
  absl::Mutex mu;
  absl::flat_hash_map<std::string, Tensor> tensors;
  RdmaChannel::Options o;
  o.local_task = kBenchProducer;
  o.remote_task = kBenchConsumer;
  o.source = [&](int64_t, const std::string& key, TensorDone done) {
    Tensor t;
    {
      absl::MutexLock lock(&mu);
      Tensor& slot = tensors[key];
      if (!slot.IsInitialized()) {
        int64_t bytes = 0;
        absl::SimpleAtoi(absl::StripPrefix(key, "bytes="), &bytes);
        slot = Tensor(DT_FLOAT, TensorShape({bytes / 4}));
        for (float& x : slot.flat<float>()) x = 1.0f;
      }
      t = slot;
    }
    done(absl::OkStatus(), t, false);
  };
  auto ch = RdmaChannel::Create(provider->get(), o);
  GetRemoteAddressRequest req;
  if (!ch.ok() || !ReadMessage(fd, &req)) return 1;
  if (!(*ch)
           ->Connect(req.endpoint(), req.message_buffer(), req.ack_buffer(),
                     absl::Now() + absl::Seconds(10))
           .ok()) {
    return 1;
  }
  GetRemoteAddressResponse resp;
  (*ch)->FillLocalAddress(&resp);
  if (!WriteMessage(fd, resp)) return 1;
  char c;
  while (read(fd, &c, 1) > 0) {
  }
  return 0;
}

// Times receives over a verbs channel to a child process. Must run before
// this process starts any thread (it forks).
void TimeVerbsChannel(int reps) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    _exit(ServeChannel(fds[1]));
  }
  close(fds[1]);
  auto provider = ShmProvider::Create();
  RdmaChannel::Options o;
  o.local_task = kBenchConsumer;
  o.remote_task = kBenchProducer;
  o.source = [](int64_t, const std::string&, TensorDone done) {
    done(absl::NotFoundError("the consumer serves nothing"), Tensor(), false);
  };
  auto ch = provider.ok() ? RdmaChannel::Create(provider->get(), o)
                          : absl::StatusOr<std::shared_ptr<RdmaChannel>>(provider.status());
  GetRemoteAddressRequest req;
  GetRemoteAddressResponse resp;
  if (ch.ok()) (*ch)->FillLocalAddress(&req);
  if (!ch.ok() || !WriteMessage(fds[0], req) || !ReadMessage(fds[0], &resp) ||
      !(*ch)
           ->Connect(resp.endpoint(), resp.message_buffer(), resp.ack_buffer(),
                     absl::Now() + absl::Seconds(10))
           .ok()) {
    std::fprintf(stderr, "verbs channel did not start\n");
  } else {
    std::printf("\nverbs channel between two processes (shared memory), medians\n");
    std::printf("%10s %14s %14s %14s %14s\n", "size", "verbs recv", "verbs 1-way", "tcp 1-way",
                "memcpy");
    int64_t step = 0;
    for (size_t bytes : {size_t{1} << 10, size_t{64} << 20}) {
      const std::string key = absl::StrCat("bytes=", bytes);
      const int n = bytes < (1 << 20) ? 2000 : std::max(5, reps);
      std::vector<double> times;
      for (int r = 0; r < n + 3; ++r) {
        std::atomic<bool> arrived{false};
        absl::Notification notified;
        absl::Status status;
        const auto t0 = Clock::now();
        (*ch)->RecvTensor(++step, key, [&](const absl::Status& s, const Tensor&, bool) {
          status = s;
          arrived.store(true, std::memory_order_release);
          notified.Notify();
        });
        // Small receives are timed spinning (a wake-up would be most of
        // them); large ones sleeping, leaving the cores to the copy.
        if (bytes < (1 << 20)) {
          while (!arrived.load(std::memory_order_acquire)) {
          }
        }
        notified.WaitForNotification();
        const double t = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!status.ok()) {
          std::fprintf(stderr, "verbs receive failed: %s\n", status.ToString().c_str());
          break;
        }
        if (r >= 3) times.push_back(t);  // the first ones grow the buffers
      }
      if (times.empty()) break;
      const double recv = bench::Median(times);
      const double tcp = TimeTcpOneWay(bytes, bytes < (1 << 20) ? 2000 : std::max(5, reps));
      const double mem = TimeMemcpy(bytes, bytes < (1 << 20) ? 2000 : std::max(5, reps));
      const std::string size = bytes >= (1 << 20) ? absl::StrCat(bytes >> 20, " MiB")
                                                  : absl::StrCat(bytes >> 10, " KiB");
      if (bytes < (1 << 20)) {
        // Latency: the receive is a round trip (request, then the write).
        std::printf("%10s %12.1fus %12.1fus %12.1fus %12.2fus\n", size.c_str(), recv * 1e6,
                    recv / 2 * 1e6, tcp * 1e6, mem * 1e6);
      } else {
        std::printf(
            "%10s %12.2fms %14s %12.2fms %12.2fms   (verbs %.2f GB/s = %.0f%% of "
            "memcpy %.2f GB/s; tcp %.2f GB/s)\n",
            size.c_str(), recv * 1e3, "", tcp * 1e3, mem * 1e3, bytes / recv / 1e9,
            100 * mem / recv, bytes / mem / 1e9, bytes / tcp / 1e9);
      }
    }
  }
  close(fds[0]);
  waitpid(pid, nullptr, 0);
}

// Median round trip of a GetStatus call (nothing to do on the server) to the
// task at 127.0.0.1:`port` through the gRPC worker client: the floor under
// every RPC a step makes.
// A bare GetStatus round trip through a blocking stub: the calling thread
// polls for its own reply, as GrpcSession's RunStep does.
double TimeGetStatus(int port, int reps) {
  auto channel = NewGrpcChannel(absl::StrCat("127.0.0.1:", port));
  if (!channel.ok()) return -1;
  std::unique_ptr<WorkerService::Stub> stub = WorkerService::NewStub(*channel);
  std::vector<double> times;
  for (int r = 0; r < reps + 10; ++r) {
    GetStatusRequest req;
    GetStatusResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    const auto t0 = Clock::now();
    if (!stub->GetStatus(&ctx, req, &resp).ok()) return -1;
    if (r >= 10) times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return bench::Median(times);
}

int Main(int argc, char** argv) {
  int min_kib = 1;
  int max_mib = 256;
  int max_kib = 0;
  int reps = 7;
  int rtt_steps = 200;
  std::vector<std::string> protocols = {"grpc", "grpc+verbs"};
  std::vector<std::string> side_channels = {"on", "off"};
  std::vector<std::string> pushes = {"on"};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--side-channel") == 0) {
      side_channels = absl::StrSplit(argv[i + 1], ',');
    }
    if (std::strcmp(argv[i], "--tensor-push") == 0) pushes = absl::StrSplit(argv[i + 1], ',');
    if (std::strcmp(argv[i], "--min-kib") == 0) min_kib = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--max-mib") == 0) max_mib = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--max-kib") == 0) max_kib = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--rtt-steps") == 0) rtt_steps = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--protocol") == 0) protocols = absl::StrSplit(argv[i + 1], ',');
  }
  for (const std::string& p : protocols) {
    if (p != "grpc" && p != "grpc+verbs") {
      std::fprintf(stderr, "--protocol takes grpc and/or grpc+verbs, got '%s'\n", p.c_str());
      return 2;
    }
  }
  for (const std::string& side : side_channels) {
    if (side != "on" && side != "off") {
      std::fprintf(stderr, "--side-channel takes on and/or off, got '%s'\n", side.c_str());
      return 2;
    }
  }
  if (std::find(protocols.begin(), protocols.end(), "grpc+verbs") != protocols.end()) {
    TimeVerbsChannel(reps);
  }
  // (protocol, side channel, push) runs: grpc once per side-channel
  // setting, and with the side channel once per push setting.
  struct Run {
    std::string protocol, side, push;
  };
  std::vector<Run> runs;
  for (const std::string& protocol : protocols) {
    if (protocol != "grpc") {
      runs.push_back({protocol, "on", "off"});
      continue;
    }
    for (const std::string& side : side_channels) {
      if (side == "off") {
        runs.push_back({protocol, side, "off"});
        continue;
      }
      for (const std::string& push : pushes) runs.push_back({protocol, side, push});
    }
  }
  for (const auto& [protocol, side, push] : runs) {
    const std::string cluster = "worker=127.0.0.1:0,127.0.0.1:0";
    Child w0 = StartServer(DISTFLOW_BINARY, cluster, "worker", 0, protocol, side, push);
    Child w1 = StartServer(DISTFLOW_BINARY, cluster, "worker", 1, protocol, side, push);
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

    std::printf(
        "\n--protocol %s --tensor-side-channel %s --tensor-push %s: a tensor between two server "
        "processes vs a loopback TCP socket and memcpy (medians of %d)\n",
        protocol.c_str(), side.c_str(), push.c_str(), reps);
    std::printf("%10s %12s %12s %12s %12s %12s %8s\n", "size", "step_remote", "step_local",
                "transfer", "tcp", "memcpy", "ratio");
    const size_t largest_kib =
        max_kib > 0 ? static_cast<size_t>(max_kib) : static_cast<size_t>(max_mib) * 1024;
    for (size_t kib = std::max(1, min_kib); kib <= largest_kib; kib *= 4) {
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
      const double mem = TimeMemcpy(kib * 1024, r);
      const std::string size =
          kib >= 1024 ? absl::StrCat(kib / 1024, " MiB") : absl::StrCat(kib, " KiB");
      std::printf(
          "%10s %10.3fms %10.3fms %10.3fms %10.3fms %10.3fms %8.2f   (%.0f vs tcp %.0f, memcpy "
          "%.0f MB/s)\n",
          size.c_str(), t_remote * 1e3, t_local * 1e3, transfer * 1e3, tcp * 1e3, mem * 1e3,
          transfer / tcp, kib * 1024 / transfer / 1e6, kib * 1024 / tcp / 1e6,
          kib * 1024 / mem / 1e6);
      (*remote)->Close().IgnoreError();
      (*local)->Close().IgnoreError();
    }

    // Round trip of a one-node step through the master.
    auto s = NewSession(opts);
    (*s)->Create(bench::OneConstGraph("/job:worker/task:0")).IgnoreError();
    const double rtt = TimeSteps(s->get(), "c", rtt_steps);
    std::printf("one-node RunStep round trip: median %.1f us over %d steps\n", rtt * 1e6,
                rtt_steps);
    std::printf("  floors: GetStatus round trip %.1f us, TCP 1-byte ping-pong %.1f us\n",
                TimeGetStatus(w0.port, 1000) * 1e6, 2 * TimeTcpOneWay(1, 1000) * 1e6);
    (*s)->Close().IgnoreError();
    Stop(w0);
    Stop(w1);
  }
  return 0;
}

}  // namespace
}  // namespace distflow

int main(int argc, char** argv) { return distflow::Main(argc, argv); }
