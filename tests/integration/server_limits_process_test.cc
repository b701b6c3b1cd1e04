// What a stranger on the network can make a `distflow server` process hold:
// a flood of plain TCP connections beyond the usual 1024-file limit leaves
// the port serving (the server raises its own limit); receives for steps
// that never run are dropped at their caller's deadline, so memory stays
// flat however many come; sessions naming a peer that never answers, with a
// huge timeout, hold no thread of the master while they wait, so a normal
// session is served beside them.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/session.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_session.h"
#include "distflow/distributed_runtime/rpc/grpc_util.h"
#include "distflow/distributed_runtime/rpc/grpc_worker_client.h"
#include "distflow/framework/tensor_proto.h"
#include "distflow/master_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server_process.h"

namespace distflow {
namespace {

constexpr char kTask[] = "/job:worker/replica:0/task:0";

// The resident set of process `pid` in bytes (VmRSS), or -1.
int64_t RssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    int64_t kb;
    if (line.rfind("VmRSS:", 0) == 0 &&
        absl::SimpleAtoi(absl::StripSuffix(absl::StripAsciiWhitespace(line.substr(6)), " kB"),
                         &kb)) {
      return kb * 1024;
    }
  }
  return -1;
}

// Receives of steps the worker never runs, kInFlight at a time, each with a
// deadline of kDeadlineMs.
class ReceiveFlood {
 public:
  static constexpr int kInFlight = 64;
  static constexpr int kDeadlineMs = 20;

  explicit ReceiveFlood(const std::string& address)
      : client_(kTask, *NewGrpcChannel(address)),
        key_suffix_(absl::StrCat(kTask, "/device:CPU:0;0000000000000001;",
                                 "/job:worker/replica:0/task:1/device:CPU:0;edge;0:0")) {}

  // Sends `n` receives for steps first_step, first_step + 1, ... and waits
  // for all; counts how each ended.
  void Run(int64_t first_step, int n) {
    struct Call {
      Tensor tensor;
      bool is_dead = false;
      CallOptions opts;
    };
    for (int i = 0; i < n; ++i) {
      {
        absl::MutexLock l(&mu_);
        mu_.Await(absl::Condition(
            +[](int* in_flight) { return *in_flight < kInFlight; }, &in_flight_));
        ++in_flight_;
      }
      auto* call = new Call;
      call->opts.set_timeout_ms(kDeadlineMs);
      client_.RecvTensorAsync(first_step + i, key_suffix_, &call->tensor, &call->is_dead,
                              &call->opts, [this, call](const absl::Status& s) {
                                delete call;
                                absl::MutexLock l(&mu_);
                                --in_flight_;
                                if (absl::IsDeadlineExceeded(s) || absl::IsCancelled(s)) {
                                  ++timed_out_;
                                } else {
                                  ++other_;
                                  last_other_ = s;
                                }
                              });
    }
    absl::MutexLock l(&mu_);
    mu_.Await(absl::Condition(
        +[](int* in_flight) { return *in_flight == 0; }, &in_flight_));
  }

  int64_t timed_out() {
    absl::MutexLock l(&mu_);
    return timed_out_;
  }
  int64_t other() {
    absl::MutexLock l(&mu_);
    return other_;
  }
  absl::Status last_other() {
    absl::MutexLock l(&mu_);
    return last_other_;
  }

 private:
  GrpcWorkerClient client_;
  const std::string key_suffix_;
  absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t timed_out_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t other_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status last_other_ ABSL_GUARDED_BY(mu_);
};

// 20 000 receives that time out, each for a step id the worker never runs,
// leave the server's resident memory within 32 MiB of where it was after
// 2 000 of them (it grew by about 16 KiB a receive when each step's table
// stayed until a cleanup that never came).
TEST(ServerLimitsTest, TimedOutReceivesForStepsThatNeverRunLeaveNoMemory) {
  auto server = ServerProcess::Start("worker=127.0.0.1:0", "worker", 0);
  ASSERT_NE(server, nullptr);
  // Never destroyed: each call's context is released on a gRPC thread after
  // its callback ran, and destroying the client right after the last
  // callback aborted about one run in three with a double free in that
  // teardown (not understood yet; the server's side is what is measured).
  ReceiveFlood& flood = *new ReceiveFlood(server->address());
  flood.Run(1, 2000);
  const int64_t before = RssBytes(server->pid());
  ASSERT_GT(before, 0);
  flood.Run(2001, 20000);
  const int64_t after = RssBytes(server->pid());
  EXPECT_EQ(flood.timed_out(), 22000);
  EXPECT_EQ(flood.other(), 0) << flood.last_other();
  std::cout << "resident " << before / (1 << 20) << " MiB after 2 000 receives, "
            << after / (1 << 20) << " MiB after 20 000 more" << std::endl;
  EXPECT_LT(after - before, int64_t{32} << 20);
}

// A session on the one-task cluster at `server` runs a Const; its status.
absl::StatusOr<std::unique_ptr<Session>> SessionOn(const ServerProcess& server) {
  SessionOptions opts;
  opts.target = absl::StrCat("grpc://", server.address());
  absl::StatusOr<ClusterSpec> own = ClusterSpec::FromFlag("worker=" + server.address());
  if (!own.ok()) return own.status();
  *opts.config.mutable_cluster_def() = own->def();
  opts.config.set_operation_timeout_in_ms(30000);
  return NewSession(opts);
}

absl::Status RunConstOn(const ServerProcess& server) {
  absl::StatusOr<std::unique_ptr<Session>> session = SessionOn(server);
  if (!session.ok()) return session.status();
  GraphDef g;
  NodeDef* c = g.add_node();
  c->set_name("c");
  c->set_op("Const");
  (*c->mutable_attr())["dtype"].set_type(DT_FLOAT);
  TensorToProto(Tensor::Scalar<float>(7), (*c->mutable_attr())["value"].mutable_tensor());
  DF_RETURN_IF_ERROR((*session)->Create(g));
  std::vector<Tensor> out;
  DF_RETURN_IF_ERROR((*session)->Run({}, {"c"}, {}, &out));
  if (out.size() != 1 || out[0].scalar<float>() != 7.0f) return absl::InternalError("wrong value");
  return absl::OkStatus();
}

// 1 500 plain TCP connections to the gRPC port of a server started with the
// usual soft limit of 1024 open files: it serves a step while they are
// open and after they are closed, and closes one that stays silent. (With
// the 1024 limit, accept failed with "Too many open files" and gRPC's port
// never served again.)
TEST(ServerLimitsTest, ConnectionFloodLeavesThePortServing) {
  constexpr int kConnections = 1500;
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max < kConnections + 512) {
    GTEST_SKIP() << "the hard limit on open files, " << limit.rlim_max << ", is too low to flood";
  }
  // The server starts with the usual soft limit, this process floods with
  // the hard one.
  rlimit usual = limit;
  usual.rlim_cur = 1024;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &usual), 0);
  auto server = ServerProcess::Start("worker=127.0.0.1:0", "worker", 0);
  limit.rlim_cur = limit.rlim_max;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  ASSERT_NE(server, nullptr);

  std::vector<int> fds;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(server->port()));
  for (int i = 0; i < kConnections; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << i;
  }
  absl::Status during = RunConstOn(*server);
  EXPECT_TRUE(during.ok()) << during;
  // A connection that never starts its handshake is closed by the server
  // (after kServerHandshakeTimeoutMs; this waits up to 60 s for it).
  const int silent = fds.back();
  fds.pop_back();
  for (int fd : fds) close(fd);
  absl::Status after = RunConstOn(*server);
  EXPECT_TRUE(after.ok()) << after;
  // The server may speak first (its HTTP/2 settings); then it hangs up.
  bool closed = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!closed && std::chrono::steady_clock::now() < give_up) {
    pollfd pfd{silent, POLLIN, 0};
    if (poll(&pfd, 1, 1000) != 1) continue;
    char buf[256];
    closed = read(silent, buf, sizeof(buf)) <= 0;
  }
  EXPECT_TRUE(closed) << "the server kept a connection that never said a word";
  close(silent);
}

// A gRPC server that takes every call and never answers one: a peer that
// never answers (a handshake that fails, or a GOAWAY, would end the calls;
// this one completes the handshake and keeps the connection).
class UnansweringPeer {
 public:
  UnansweringPeer() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    // It keeps the connection: the callers' keepalive pings never earn a
    // GOAWAY that would end their calls.
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 0);
    builder.RegisterAsyncGenericService(&service_);
    cq_ = builder.AddCompletionQueue();
    server_ = builder.BuildAndStart();
  }
  ~UnansweringPeer() {
    server_->Shutdown(std::chrono::system_clock::now());
    cq_->Shutdown();
    void* tag;
    bool ok;
    while (cq_->Next(&tag, &ok)) {
    }
  }
  int port() const { return server_ != nullptr ? port_ : -1; }

 private:
  grpc::AsyncGenericService service_;
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// 16 CreateSession calls naming a task that never answers, each asking for
// an operation timeout of 2^53 ms, wait without holding the master's
// threads: a normal session on the same master is created and runs a step
// meanwhile. (Before, the 16 held every thread of the master's pool and the
// normal session failed after its own timeout.)
TEST(ServerLimitsTest, SessionsWaitingForASilentPeerLeaveTheMasterServing) {
  auto server = ServerProcess::Start("worker=127.0.0.1:0", "worker", 0);
  ASSERT_NE(server, nullptr);
  UnansweringPeer silent;
  ASSERT_GT(silent.port(), 0);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = NewGrpcChannel(server->address());
  ASSERT_TRUE(channel.ok());
  std::unique_ptr<MasterService::Stub> stub = MasterService::NewStub(*channel);
  constexpr int kWedging = 16;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::thread> strangers;
  std::vector<grpc::Status> results(kWedging);
  absl::Mutex mu;
  int started = 0;
  for (int i = 0; i < kWedging; ++i) contexts.push_back(std::make_unique<grpc::ClientContext>());
  for (int i = 0; i < kWedging; ++i) {
    strangers.emplace_back([&, i] {
      CreateSessionRequest req;
      absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromFlag(
          absl::StrCat("worker=", server->address(), ";silent=127.0.0.1:", silent.port()));
      *req.mutable_config()->mutable_cluster_def() = cluster->def();
      req.mutable_config()->set_operation_timeout_in_ms(int64_t{1} << 53);
      CreateSessionResponse resp;
      {
        absl::MutexLock l(&mu);
        ++started;
      }
      results[i] = stub->CreateSession(contexts[i].get(), req, &resp);
    });
  }
  {
    absl::MutexLock l(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == kWedging; }, &started));
  }

  // A normal client, bounded by its own 30 s deadline.
  absl::Status ran = RunConstOn(*server);
  EXPECT_TRUE(ran.ok()) << ran;

  // The strangers give up; their calls end.
  for (auto& ctx : contexts) ctx->TryCancel();
  for (std::thread& t : strangers) t.join();
  for (const grpc::Status& s : results) EXPECT_FALSE(s.ok());
}

NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op,
                 std::vector<std::string> inputs = {}) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (std::string& in : inputs) n->add_input(std::move(in));
  return n;
}

void AddConst(GraphDef* g, const std::string& name, const Tensor& value) {
  NodeDef* c = AddNode(g, name, "Const");
  (*c->mutable_attr())["dtype"].set_type(value.dtype());
  TensorToProto(value, (*c->mutable_attr())["value"].mutable_tensor());
}

// The peak resident set of process `pid` in bytes (VmHWM), or -1.
int64_t PeakRssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    int64_t kb;
    if (line.rfind("VmHWM:", 0) == 0 &&
        absl::SimpleAtoi(absl::StripSuffix(absl::StripAsciiWhitespace(line.substr(6)), " kB"),
                         &kb)) {
      return kb * 1024;
    }
  }
  return -1;
}

// With --memory-budget-mb 64, a feed whose request and copies do not fit is
// refused (alone and three at once), and so is a fetch of a million
// 40-byte strings, whose tensor fits (32 MiB) but whose encoding (about
// 110 MiB) does not: each ResourceExhausted naming the budget, and the
// server goes on serving a small feed and a normal session. (Before, the
// budget counted tensors only: two 900 MiB feeds killed a 6 GiB master, and
// a 411-byte graph fetching 2^27 strings killed a server.)
TEST(ServerLimitsTest, RequestsAndFetchesBeyondTheMemoryBudgetAreRefused) {
  auto server = ServerProcess::Start("worker=127.0.0.1:0", "worker", 0,
                                     {"--memory-budget-mb", "64", "--max-request-mb", "256"});
  ASSERT_NE(server, nullptr);
  absl::StatusOr<std::unique_ptr<Session>> session = SessionOn(*server);
  ASSERT_TRUE(session.ok()) << session.status();
  GraphDef g;
  NodeDef* x = AddNode(&g, "x", "Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  (*AddNode(&g, "y", "Identity", {"x"})->mutable_attr())["T"].set_type(DT_FLOAT);
  Tensor dims(DT_INT32, TensorShape({1}));
  dims.flat<int32_t>()[0] = 1 << 20;
  AddConst(&g, "dims", dims);
  Tensor text(DT_STRING, TensorShape({}));
  text.scalar<std::string>() = std::string(40, 'a');
  AddConst(&g, "text", text);
  (*AddNode(&g, "strings", "Fill", {"dims", "text"})->mutable_attr())["T"].set_type(DT_STRING);
  absl::Status created = (*session)->Create(g);
  ASSERT_TRUE(created.ok()) << created;

  auto feed_of = [](int64_t floats) {
    Tensor t(DT_FLOAT, TensorShape({floats}));
    for (int64_t i = 0; i < floats; ++i) t.flat<float>()[i] = static_cast<float>(i % 1000);
    return t;
  };
  const Tensor big = feed_of(int64_t{12} << 20);  // 48 MiB
  std::vector<Tensor> out;
  absl::Status alone = (*session)->Run({{"x", big}}, {"y"}, {}, &out);
  EXPECT_TRUE(absl::IsResourceExhausted(alone)) << alone;
  EXPECT_THAT(alone.message(), ::testing::HasSubstr("memory budget"));

  std::vector<absl::Status> together(3);
  std::vector<std::thread> callers;
  for (int i = 0; i < 3; ++i) {
    callers.emplace_back([&, i] {
      std::vector<Tensor> o;
      together[i] = (*session)->Run({{"x", big}}, {"y"}, {}, &o);
    });
  }
  for (std::thread& t : callers) t.join();
  for (const absl::Status& s : together) EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;

  absl::Status strings = (*session)->Run({}, {"strings"}, {}, &out);
  EXPECT_TRUE(absl::IsResourceExhausted(strings)) << strings;
  EXPECT_THAT(strings.message(), ::testing::HasSubstr("encoding fetch"));

  const Tensor small = feed_of(1 << 18);  // 1 MiB
  absl::Status fits = (*session)->Run({{"x", small}}, {"y"}, {}, &out);
  ASSERT_TRUE(fits.ok()) << fits;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].NumElements(), small.NumElements());
  EXPECT_EQ(out[0].flat<float>()[999], 999.0f);
  absl::Status normal = RunConstOn(*server);
  EXPECT_TRUE(normal.ok()) << normal;
  std::cout << "peak resident set of the server: " << PeakRssBytes(server->pid()) / (1 << 20)
            << " MiB\n";
}

}  // namespace
}  // namespace distflow
