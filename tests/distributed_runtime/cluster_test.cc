// Servers of a three-task cluster (ps:0, worker:0, worker:1) in this
// process, on loopback ports, driven through GrpcSession.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rendezvous_mgr.h"
#include "distflow/distributed_runtime/rpc/grpc_server.h"
#include "distflow/distributed_runtime/rpc/grpc_session.h"
#include "distflow/framework/tensor_proto.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loopback_socket.h"
#include "queue_graph.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// y = (a x b) + a spread over three tasks; fetches m and y.
constexpr char kGraph[] = R"pb(
  node {
    name: "a"
    op: "Const"
    device: "/job:ps/task:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape {
            dim { size: 2 }
            dim { size: 2 }
          }
          float_val: 1
          float_val: 2
          float_val: 3
          float_val: 4
        }
      }
    }
  }
  node {
    name: "x"
    op: "Placeholder"
    device: "/job:worker/task:1"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value {
        shape {
          dim { size: 2 }
          dim { size: 2 }
        }
      }
    }
  }
  node {
    name: "m"
    op: "MatMul"
    input: "a"
    input: "x"
    device: "/job:worker/task:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "y"
    op: "AddV2"
    input: "m"
    input: "a"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "bad"
    op: "Reshape"
    input: "y"
    input: "shape"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "shape"
    op: "Const"
    device: "/job:worker/task:1"
    attr {
      key: "dtype"
      value { type: DT_INT32 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT32
          tensor_shape { dim { size: 1 } }
          int_val: 3
        }
      }
    }
  }
)pb";

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A port found free may be taken by another test's process before the
    // server binds it; binding a taken port fails, so pick again.
    absl::Status last;
    for (int attempt = 0; attempt < 5; ++attempt) {
      last = StartServers();
      if (last.ok()) return;
      servers_.clear();
    }
    FAIL() << last;
  }

  absl::Status StartServers() {
    const int p0 = test::FreePort(), p1 = test::FreePort(), p2 = test::FreePort();
    const std::string cluster =
        absl::StrCat("ps=127.0.0.1:", p0, ";worker=127.0.0.1:", p1, ",127.0.0.1:", p2);
    for (auto [job, task] : {std::pair<const char*, int>{"ps", 0}, {"worker", 0}, {"worker", 1}}) {
      auto def = MakeServerDef(cluster, job, task);
      if (!def.ok()) return def.status();
      auto server = GrpcServer::Create(*def);
      if (!server.ok()) return server.status();
      if (absl::Status s = (*server)->Start(); !s.ok()) return s;
      servers_.push_back(std::move(*server));
    }
    return absl::OkStatus();
  }

  std::unique_ptr<GrpcSession> NewClusterSession(ConfigProto config = {}) {
    SessionOptions opts;
    opts.target = servers_[1]->target();
    opts.config = config;
    auto session = GrpcSession::Create(opts);
    EXPECT_TRUE(session.ok());
    GraphDef g;
    EXPECT_TRUE(ParseGraphDefText(kGraph, &g).ok());
    absl::Status s = (*session)->Create(g);
    EXPECT_TRUE(s.ok()) << s;
    return std::move(*session);
  }

  static Tensor X() { return Tensor::FromVector<float>({1, 0, 0, 2}, TensorShape({2, 2})); }

  std::vector<std::unique_ptr<GrpcServer>> servers_;
};

// The local addresses of the sockets listening on `port`, as /proc/net/tcp
// and tcp6 write them (127.0.0.1 is "0100007F", 0.0.0.0 is "00000000").
std::vector<std::string> ListeningAddresses(int port) {
  std::vector<std::string> out;
  const std::string suffix =
      absl::StrCat(":", absl::AsciiStrToUpper(absl::StrFormat("%04x", port)));
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state == "0A" && absl::EndsWith(local, suffix)) {
        out.push_back(local.substr(0, local.size() - suffix.size()));
      }
    }
  }
  return out;
}

TEST_F(ClusterTest, LoopbackClusterEntryListensOnLoopbackOnly) {
  for (const auto& server : servers_) {
    // 127.0.0.1, on an IPv4 socket or mapped on a dual-stack one, and on
    // no other address. (Tests running beside this one may hold listeners
    // on the same port number on loopback too: port 0 with SO_REUSEADDR
    // can hand one number to several sockets; one CI run listed three.)
    const std::vector<std::string> addresses = ListeningAddresses(server->bound_port());
    EXPECT_FALSE(addresses.empty()) << server->task_name();
    EXPECT_THAT(addresses,
                ::testing::Each(::testing::AnyOf("0100007F", "0000000000000000FFFF00000100007F")))
        << server->task_name();
  }
}

TEST_F(ClusterTest, RunsAcrossThreeTasks) {
  auto session = NewClusterSession();
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"x", X()}}, {"y", "m:0", "y"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 3u);
  // m = a.x = [[1,4],[3,8]]; y = m + a = [[2,6],[6,12]].
  EXPECT_EQ(out[1].DebugString(), "Tensor<type: float32 shape: [2,2] values: [[1 4][3 8]]>");
  EXPECT_EQ(out[0].DebugString(), "Tensor<type: float32 shape: [2,2] values: [[2 6][6 12]]>");
  EXPECT_EQ(out[2].DebugString(), out[0].DebugString());

  std::vector<DeviceAttributes> devices;
  ASSERT_TRUE(session->ListDevices(&devices).ok());
  EXPECT_EQ(devices.size(), 3u);
  EXPECT_TRUE(session->Close().ok());
}

// A finished step's CleanupGraph rides on the next RunGraph to each task,
// so a task holds at most the last step's rendezvous while steps go on;
// once they stop, the master flushes that one too.
TEST_F(ClusterTest, FinishedStepsAreCleanedUpWithTheNextRunGraph) {
  auto session = NewClusterSession();
  for (int i = 0; i < 20; ++i) {
    std::vector<Tensor> out;
    absl::Status s = session->Run({{"x", X()}}, {"y"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(out[0].DebugString(), "Tensor<type: float32 shape: [2,2] values: [[2 6][6 12]]>");
  }
  for (const auto& server : servers_) {
    EXPECT_LE(server->rendezvous_mgr().NumSteps(), 1u) << server->task_name();
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  for (const auto& server : servers_) {
    while (server->rendezvous_mgr().NumSteps() > 0 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    EXPECT_EQ(server->rendezvous_mgr().NumSteps(), 0u) << server->task_name();
  }
  EXPECT_TRUE(session->Close().ok());
}

TEST_F(ClusterTest, KernelErrorNamesNodeAndTask) {
  auto session = NewClusterSession();
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"x", X()}}, {"bad"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'bad'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:worker/replica:0/task:1"));
  // The session still works afterwards.
  EXPECT_TRUE(session->Run({{"x", X()}}, {"y"}, {}, &out).ok());
}

TEST_F(ClusterTest, BadFeedsAndFetches) {
  auto session = NewClusterSession();
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"x", X()}}, {"nope:0"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("nope"));
  s = session->Run({}, {"y"}, {}, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("x"));
  // Feeds are checked on the master, as a local session checks them.
  s = session->Run({{"x", Tensor::FromVector<int32_t>({1, 2, 3, 4}, TensorShape({2, 2}))}}, {"y"},
                   {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("feed 'x': expected a value of type "));
  s = session->Run({{"x", Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}))}}, {"y"}, {},
                   &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("does not fit the placeholder's shape"));
  // The same tensor fed twice under two spellings.
  s = session->Run({{"x", X()}, {"x:0", X()}}, {"y"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is listed more than once"));
}

TEST_F(ClusterTest, ConcurrentClients) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto session = NewClusterSession();
      for (int i = 0; i < 20; ++i) {
        Tensor x = Tensor::FromVector<float>({static_cast<float>(i), 0, 0, 1}, TensorShape({2, 2}));
        std::vector<Tensor> out;
        if (!session->Run({{"x", x}}, {"m"}, {}, &out).ok()) continue;
        // m = a.x = [[i, 2], [3i, 4]].
        auto v = out[0].flat<float>();
        if (v[0] == i && v[1] == 2 && v[2] == 3 * i && v[3] == 4) ok++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 80);
}

TEST_F(ClusterTest, CallablesAndPartialRuns) {
  auto session = NewClusterSession();
  CallableOptions opts;
  opts.add_feed("x");
  opts.add_fetch("y");
  GrpcSession::CallableHandle h;
  ASSERT_TRUE(session->MakeCallable(opts, &h).ok());
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(session->RunCallable(h, {X()}, &out, nullptr).ok());
    EXPECT_EQ(out[0].flat<float>()[3], 12.0f);
  }
  ASSERT_TRUE(session->ReleaseCallable(h).ok());
  EXPECT_FALSE(session->RunCallable(h, {X()}, &out, nullptr).ok());

  std::string prun;
  ASSERT_TRUE(session->PRunSetup({"x"}, {"m", "y"}, {}, &prun).ok());
  absl::Status s = session->PRun(prun, {{"x", X()}}, {"m"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<float>()[3], 8.0f);
  s = session->PRun(prun, {}, {"y"}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<float>()[3], 12.0f);
  // The partial run is over.
  EXPECT_FALSE(session->PRun(prun, {}, {"y"}, &out).ok());
}

// test::kQueueGraph with the queue on ps:0 and its value on worker:1.
GraphDef PlacedQueueGraph() {
  GraphDef g;
  EXPECT_TRUE(ParseGraphDefText(test::kQueueGraph, &g).ok());
  for (NodeDef& n : *g.mutable_node()) {
    if (n.name() == "q") n.set_device("/job:ps/task:0");
    if (n.name() == "v") n.set_device("/job:worker/task:1");
  }
  return g;
}

TEST_F(ClusterTest, BlockedStepsHoldNoMasterThread) {
  SessionOptions opts;
  opts.target = servers_[1]->target();
  auto created = GrpcSession::Create(opts);
  ASSERT_TRUE(created.ok()) << created.status();
  std::unique_ptr<GrpcSession> session = std::move(*created);
  ASSERT_TRUE(session->Create(PlacedQueueGraph()).ok());
  // More blocked steps than the master has pool threads: each waits on the
  // empty queue, and none may hold a thread of the master while it waits.
  constexpr int kBlocked = 24;
  std::atomic<int> dequeued{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kBlocked; ++i) {
    threads.emplace_back([&] {
      std::vector<Tensor> out;
      absl::Status s = session->Run({}, {"deq"}, {}, &out);
      if (s.ok() && out[0].flat<float>()[0] == 7.0f) dequeued++;
    });
  }
  // Later steps still run, through the same master: one on another graph,
  // then the enqueues that release every blocked step.
  auto other = NewClusterSession();
  std::vector<Tensor> out;
  absl::Status s = other->Run({{"x", X()}}, {"y"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<float>()[3], 12.0f);
  for (int i = 0; i < kBlocked; ++i) {
    s = session->Run({}, {}, {"enq"}, &out);
    ASSERT_TRUE(s.ok()) << s;
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(dequeued.load(), kBlocked);
}

TEST_F(ClusterTest, StepTimeout) {
  ConfigProto config;
  config.set_operation_timeout_in_ms(300);
  auto session = NewClusterSession(config);
  // A partial run that fetches m without ever feeding x waits on x until the
  // step deadline, then fails without hanging.
  std::string prun;
  ASSERT_TRUE(session->PRunSetup({"x"}, {"m"}, {}, &prun).ok());
  std::vector<Tensor> out;
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = session->PRun(prun, {}, {"m"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  // Regular steps still work.
  EXPECT_TRUE(session->Run({{"x", X()}}, {"y"}, {}, &out).ok());
}

TEST_F(ClusterTest, UnreachableMaster) {
  // A port bound but not listening refuses connections, and stays ours
  // for the whole test.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  SessionOptions opts;
  opts.target = absl::StrCat("grpc://127.0.0.1:", ntohs(addr.sin_port));
  auto session = GrpcSession::Create(opts);
  ASSERT_TRUE(session.ok());
  absl::Status s = (*session)->Create(GraphDef());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("unreachable"));
  close(fd);
}

TEST_F(ClusterTest, CondBranchesOnOtherTasksCarryDeadness) {
  // out = p ? x * x (on worker:0) : -x (on ps:0), merged on worker:1: the
  // branch not taken sends a dead tensor over RecvTensor.
  constexpr char kCond[] = R"pb(
    node {
      name: "x"
      op: "Placeholder"
      device: "/job:worker/task:1"
      attr {
        key: "dtype"
        value { type: DT_FLOAT }
      }
    }
    node {
      name: "p"
      op: "Placeholder"
      device: "/job:worker/task:1"
      attr {
        key: "dtype"
        value { type: DT_BOOL }
      }
    }
    node {
      name: "sw"
      op: "Switch"
      input: "x"
      input: "p"
      device: "/job:worker/task:1"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node {
      name: "t"
      op: "Square"
      input: "sw:1"
      device: "/job:worker/task:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node {
      name: "f"
      op: "Neg"
      input: "sw"
      device: "/job:ps/task:0"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node {
      name: "m"
      op: "Merge"
      input: "f"
      input: "t"
      device: "/job:worker/task:1"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
      attr {
        key: "N"
        value { i: 2 }
      }
    }
  )pb";
  SessionOptions opts;
  opts.target = servers_[1]->target();
  auto session = GrpcSession::Create(opts);
  ASSERT_TRUE(session.ok());
  GraphDef g;
  ASSERT_TRUE(ParseGraphDefText(kCond, &g).ok());
  ASSERT_TRUE((*session)->Create(g).ok());
  for (int i = 0; i < 6; ++i) {
    const bool p = i % 2 == 0;
    const float x = static_cast<float>(i + 2);
    std::vector<Tensor> out;
    absl::Status s = (*session)->Run(
        {{"x", Tensor::Scalar<float>(x)}, {"p", Tensor::Scalar<bool>(p)}}, {"m", "m:1"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].scalar<float>(), p ? x * x : -x);
    EXPECT_EQ(out[1].scalar<int32_t>(), p ? 1 : 0);
  }
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run(
      {{"x", Tensor::Scalar<float>(1)}, {"p", Tensor::Scalar<bool>(true)}}, {"f"}, {}, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("dead"));
}

TEST_F(ClusterTest, TakenPortIsAnErrorNotASharedListener) {
  const int taken = servers_[1]->bound_port();
  auto def = MakeServerDef(absl::StrCat("worker=127.0.0.1:", taken), "worker", 0);
  ASSERT_TRUE(def.ok());
  auto server = GrpcServer::Create(*def);
  ASSERT_TRUE(server.ok());
  absl::Status s = (*server)->Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(absl::StrCat("127.0.0.1:", taken)));
  EXPECT_THAT(std::string(s.message()), HasSubstr("already in use"));
  // The first server still answers.
  auto session = NewClusterSession();
  std::vector<Tensor> out;
  EXPECT_TRUE(session->Run({{"x", X()}}, {"y"}, {}, &out).ok());
}

}  // namespace
}  // namespace distflow
