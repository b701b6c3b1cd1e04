// What one message costs on gRPC, two ways, next to a TCP ping-pong, in
// one run: the round trip of a unary call, and of a message and its answer
// on a bidirectional stream opened once (what a per-session stream of
// RunGraph calls would pay per step). Both ends poll their completion queue
// on one thread, as distflow's servers and clients do
// (rpc/grpc_call_queue.h), so no hand-off between gRPC's threads is
// counted that distflow would not pay. The echo server is a child process;
// the TCP echo runs in the same child. Prints medians in microseconds.
//
//   grpc_stream_floor [--bytes 1024] [--reps 2000] [--rounds 5]
//
// The rounds alternate the three so that a noisy neighbour spreads over
// all of them; the figure is the median over every round trip timed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "median.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kUnary[] = "/floor.Echo/Unary";
constexpr char kStream[] = "/floor.Echo/Stream";

// One call on the server's queue, moved along by its completions.
struct ServerCall {
  enum class State { kNew, kRead, kWrite, kFinish };
  grpc::GenericServerContext ctx;
  grpc::GenericServerAsyncReaderWriter rw{&ctx};
  grpc::ByteBuffer buf;
  State state = State::kNew;
  bool unary = false;
};

void RequestNext(grpc::AsyncGenericService* service, grpc::ServerCompletionQueue* cq) {
  auto* call = new ServerCall;
  service->RequestCall(&call->ctx, &call->rw, cq, cq, call);
}

// Echoes every message of every call until the process is killed.
void ServeGrpc(grpc::AsyncGenericService* service, grpc::ServerCompletionQueue* cq) {
  RequestNext(service, cq);
  void* tag = nullptr;
  bool ok = false;
  while (cq->Next(&tag, &ok)) {
    auto* call = static_cast<ServerCall*>(tag);
    switch (call->state) {
      case ServerCall::State::kNew:
        if (!ok) {
          delete call;
          return;
        }
        RequestNext(service, cq);
        call->unary = call->ctx.method() == kUnary;
        call->state = ServerCall::State::kRead;
        call->rw.Read(&call->buf, call);
        break;
      case ServerCall::State::kRead:
        if (!ok) {
          call->state = ServerCall::State::kFinish;
          call->rw.Finish(grpc::Status::OK, call);
        } else if (call->unary) {
          call->state = ServerCall::State::kFinish;
          call->rw.WriteAndFinish(call->buf, grpc::WriteOptions(), grpc::Status::OK, call);
        } else {
          call->state = ServerCall::State::kWrite;
          call->rw.Write(call->buf, call);
        }
        break;
      case ServerCall::State::kWrite:
        if (!ok) {
          call->state = ServerCall::State::kFinish;
          call->rw.Finish(grpc::Status::OK, call);
        } else {
          call->state = ServerCall::State::kRead;
          call->rw.Read(&call->buf, call);
        }
        break;
      case ServerCall::State::kFinish:
        delete call;
        break;
    }
  }
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t r = recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// Echoes `bytes`-sized messages on each connection accepted on `listener`.
void ServeTcp(int listener, size_t bytes) {
  for (;;) {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    std::thread([fd, bytes] {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      std::vector<char> buf(bytes);
      while (ReadAll(fd, buf.data(), bytes) && WriteAll(fd, buf.data(), bytes)) {
      }
      close(fd);
    }).detach();
  }
}

// The child: a gRPC echo server and a TCP echo on loopback; writes both
// ports to `report` and serves until killed.
[[noreturn]] void RunChild(int report, size_t bytes) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener, 4) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("tcp echo");
    _exit(1);
  }
  grpc::AsyncGenericService service;
  grpc::ServerBuilder builder;
  int grpc_port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &grpc_port);
  builder.RegisterAsyncGenericService(&service);
  std::unique_ptr<grpc::ServerCompletionQueue> cq = builder.AddCompletionQueue();
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || grpc_port == 0) {
    std::fprintf(stderr, "grpc echo server did not start\n");
    _exit(1);
  }
  const int ports[2] = {grpc_port, ntohs(addr.sin_port)};
  if (write(report, ports, sizeof(ports)) != sizeof(ports)) _exit(1);
  close(report);
  std::thread(ServeTcp, listener, bytes).detach();
  ServeGrpc(&service, cq.get());
  _exit(0);
}

// Waits for the completion of `tag` on `cq`; false when it failed.
bool Await(grpc::CompletionQueue* cq, void* tag) {
  void* got = nullptr;
  bool ok = false;
  const auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(10);
  if (cq->AsyncNext(&got, &ok, deadline) != grpc::CompletionQueue::NextStatus::GOT_EVENT) {
    return false;
  }
  return ok && got == tag;
}

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// Round trips of `reps` unary calls, appended to `out`; false on an error.
bool TimeUnary(grpc::GenericStub* stub, grpc::CompletionQueue* cq, const grpc::ByteBuffer& req,
               int reps, std::vector<double>* out) {
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
        stub->PrepareUnaryCall(&ctx, kUnary, req, cq);
    call->StartCall();
    grpc::ByteBuffer resp;
    grpc::Status status;
    int tag = 0;
    call->Finish(&resp, &status, &tag);
    if (!Await(cq, &tag) || !status.ok()) return false;
    out->push_back(Micros(Clock::now() - start));
  }
  return true;
}

// Round trips of `reps` messages on one stream, appended to `out`.
bool TimeStream(grpc::GenericStub* stub, grpc::CompletionQueue* cq, const grpc::ByteBuffer& req,
                int reps, std::vector<double>* out) {
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> rw = stub->PrepareCall(&ctx, kStream, cq);
  int tag = 0;
  rw->StartCall(&tag);
  if (!Await(cq, &tag)) return false;
  grpc::ByteBuffer resp;
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    rw->Write(req, &tag);
    if (!Await(cq, &tag)) return false;
    rw->Read(&resp, &tag);
    if (!Await(cq, &tag)) return false;
    out->push_back(Micros(Clock::now() - start));
  }
  rw->WritesDone(&tag);
  if (!Await(cq, &tag)) return false;
  grpc::Status status;
  rw->Finish(&status, &tag);
  return Await(cq, &tag) && status.ok();
}

bool TimeTcp(int fd, size_t bytes, int reps, std::vector<double>* out) {
  std::vector<char> buf(bytes, 'x');
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    if (!WriteAll(fd, buf.data(), bytes) || !ReadAll(fd, buf.data(), bytes)) return false;
    out->push_back(Micros(Clock::now() - start));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = 1024;
  int reps = 2000;
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if (value <= 0 || value > (1 << 24)) {
      std::fprintf(stderr, "%s wants a positive number up to 2^24\n", flag.c_str());
      return 2;
    }
    if (flag == "--bytes") {
      bytes = static_cast<size_t>(value);
    } else if (flag == "--reps") {
      reps = static_cast<int>(value);
    } else if (flag == "--rounds") {
      rounds = static_cast<int>(value);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  // The child is forked before this process makes any gRPC object.
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return 1;
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(pipe_fds[0]);
    RunChild(pipe_fds[1], bytes);
  }
  close(pipe_fds[1]);
  int ports[2] = {0, 0};
  const bool started = read(pipe_fds[0], ports, sizeof(ports)) == sizeof(ports);
  close(pipe_fds[0]);
  int rc = 1;
  if (started) {
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(ports[0]),
                                       grpc::InsecureChannelCredentials());
    grpc::GenericStub stub(channel);
    grpc::CompletionQueue cq;
    const std::string payload(bytes, 'x');
    const grpc::Slice slice(payload);
    const grpc::ByteBuffer req(&slice, 1);
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(ports[1]));
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::vector<double> unary, stream, tcp;
    bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    // Warm up: the channel's connection, the first stream, the socket.
    std::vector<double> warm;
    ok = ok && TimeUnary(&stub, &cq, req, 50, &warm) && TimeStream(&stub, &cq, req, 50, &warm) &&
         TimeTcp(fd, bytes, 50, &warm);
    for (int r = 0; ok && r < rounds; ++r) {
      ok = TimeUnary(&stub, &cq, req, reps, &unary) && TimeStream(&stub, &cq, req, reps, &stream) &&
           TimeTcp(fd, bytes, reps, &tcp);
    }
    if (ok) {
      const double u = distflow::bench::Median(unary), s = distflow::bench::Median(stream),
                   t = distflow::bench::Median(tcp);
      std::printf("%zu-byte message, round trip, medians of %d x %d (us)\n", bytes, rounds, reps);
      std::printf("  gRPC unary call             %8.1f\n", u);
      std::printf("  gRPC bidi stream message    %8.1f   (%.2f of unary)\n", s, s / u);
      std::printf("  TCP ping-pong               %8.1f   (unary %.2fx, stream %.2fx)\n", t, u / t,
                  s / t);
      rc = 0;
    } else {
      std::fprintf(stderr, "a call or the TCP echo failed\n");
    }
    if (fd >= 0) close(fd);
    cq.Shutdown();
    void* tag;
    bool ignored;
    while (cq.Next(&tag, &ignored)) {
    }
  } else {
    std::fprintf(stderr, "the echo server did not start\n");
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return rc;
}
