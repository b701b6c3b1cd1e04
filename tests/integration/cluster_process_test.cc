// Real `distflow server` processes on loopback: each binds port 0 and
// reports its port; the client passes the whole cluster in its session
// config. Covers values against the local session, concurrent clients, a
// worker killed with SIGKILL mid-step or frozen with SIGSTOP, a restarted
// worker, a cluster that serves only calls carrying its token, one that
// speaks only mutual TLS, a stuck step that says what it waits for, and a
// server started on a port that is already taken.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "command_line.h"
#include "distflow/common_runtime/session.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_session.h"
#include "distflow/distributed_runtime/rpc/grpc_tls.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/tensor_proto.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server_process.h"

namespace distflow {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

// b = a x a on worker:0, c = b + a on worker:1, with a on ps:0; the fetch
// "big" is a long chain on worker:1 used to kill mid-step.
constexpr char kGraph[] = R"pb(
  node {
    name: "a"
    op: "Placeholder"
    device: "/job:ps/task:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value {
        shape {
          dim { size: -1 }
          dim { size: -1 }
        }
      }
    }
  }
  node {
    name: "b"
    op: "MatMul"
    input: "a"
    input: "a"
    device: "/job:worker/task:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "c"
    op: "AddV2"
    input: "b"
    input: "a"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
)pb";

class ClusterProcessTest : public ::testing::Test {
 protected:
  void SetUp() override { StartCluster({}); }

  // With `log_dir`, task T of job J logs to LOG_DIR/J_T.log.
  void StartCluster(const std::vector<std::string>& extra, const std::string& log_dir = "") {
    auto log = [&](const std::string& task) {
      return log_dir.empty() ? std::string() : absl::StrCat(log_dir, "/", task, ".log");
    };
    ps_ = ServerProcess::Start("ps=127.0.0.1:0", "ps", 0, extra, log("ps_0"));
    w0_ =
        ServerProcess::Start("worker=127.0.0.1:0,127.0.0.1:0", "worker", 0, extra, log("worker_0"));
    w1_ =
        ServerProcess::Start("worker=127.0.0.1:0,127.0.0.1:0", "worker", 1, extra, log("worker_1"));
    ASSERT_NE(ps_, nullptr);
    ASSERT_NE(w0_, nullptr);
    ASSERT_NE(w1_, nullptr);
  }

  ConfigProto Config(int64_t timeout_ms = 20000) {
    auto spec = ClusterSpec::FromFlag(
        absl::StrCat("ps=", ps_->address(), ";worker=", w0_->address(), ",", w1_->address()));
    EXPECT_TRUE(spec.ok());
    ConfigProto config;
    *config.mutable_cluster_def() = spec->def();
    config.set_operation_timeout_in_ms(timeout_ms);
    return config;
  }

  std::unique_ptr<Session> NewClusterSession(const ConfigProto& config) {
    std::unique_ptr<Session> session;
    absl::Status s = TryNewClusterSession(config, &session);
    EXPECT_TRUE(s.ok()) << s;
    return session;
  }

  // A session whose master is `master` (worker:0 when null).
  absl::Status TryNewClusterSession(const ConfigProto& config, std::unique_ptr<Session>* out,
                                    const ServerProcess* master = nullptr) {
    SessionOptions opts;
    opts.target = absl::StrCat("grpc://", (master != nullptr ? master : w0_.get())->address());
    opts.config = config;
    auto session = NewSession(opts);
    if (!session.ok()) return session.status();
    GraphDef g;
    EXPECT_TRUE(ParseGraphDefText(kGraph, &g).ok());
    DF_RETURN_IF_ERROR((*session)->Create(g));
    *out = std::move(*session);
    return absl::OkStatus();
  }

  static GraphDef LocalGraph() {
    GraphDef g;
    EXPECT_TRUE(ParseGraphDefText(kGraph, &g).ok());
    for (NodeDef& n : *g.mutable_node()) n.clear_device();
    return g;
  }

  std::unique_ptr<ServerProcess> ps_, w0_, w1_;
};

TEST_F(ClusterProcessTest, SameValuesAsLocalSession) {
  auto remote = NewClusterSession(Config());
  auto local = NewSession(SessionOptions());
  ASSERT_TRUE(local.ok());
  ASSERT_TRUE((*local)->Create(LocalGraph()).ok());
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({3, 3}));
  std::vector<Tensor> r, l;
  absl::Status s = remote->Run({{"a", a}}, {"c", "b"}, {}, &r);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_TRUE((*local)->Run({{"a", a}}, {"c", "b"}, {}, &l).ok());
  EXPECT_EQ(r[0].DebugString(100), l[0].DebugString(100));
  EXPECT_EQ(r[1].DebugString(100), l[1].DebugString(100));
  EXPECT_EQ(r[0].flat<float>()[0], 31.0f);  // (a.a)[0][0] = 30, + a[0][0]
}

TEST_F(ClusterProcessTest, ConcurrentClients) {
  const ConfigProto config = Config();
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      auto session = NewClusterSession(config);
      for (int i = 0; i < 10; ++i) {
        const float v = static_cast<float>(t * 100 + i);
        std::vector<Tensor> out;
        absl::Status s = session->Run({{"a", Tensor::FromVector<float>({v}, TensorShape({1, 1}))}},
                                      {"c"}, {}, &out);
        EXPECT_TRUE(s.ok()) << "client " << t << " step " << i << ": " << s;
        if (!s.ok()) continue;
        if (out[0].flat<float>()[0] == v * v + v) good++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 30);
}

TEST_F(ClusterProcessTest, KilledWorkerFailsTheStepWithinTheTimeout) {
  auto session = NewClusterSession(Config(/*timeout_ms=*/15000));
  // A 1500x1500 float MatMul keeps worker:0 busy long enough to be killed.
  Tensor a(DT_FLOAT, TensorShape({1500, 1500}));
  for (float& x : a.flat<float>()) x = 1.0f;
  std::vector<Tensor> warm;
  ASSERT_TRUE(
      session->Run({{"a", Tensor::FromVector<float>({1}, TensorShape({1, 1}))}}, {"c"}, {}, &warm)
          .ok());
  absl::Status s;
  const auto start = std::chrono::steady_clock::now();
  std::thread runner([&] {
    std::vector<Tensor> out;
    for (int i = 0; i < 20 && s.ok(); ++i) s = session->Run({{"a", a}}, {"c"}, {}, &out);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  w1_->Kill(SIGKILL);
  runner.join();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(s.ok());
  std::cerr << "step error after SIGKILL: " << s << "\n";
  EXPECT_THAT(s.code(), AnyOf(absl::StatusCode::kUnavailable, absl::StatusCode::kAborted));
  EXPECT_THAT(s.message(), HasSubstr("/job:worker/replica:0/task:1"));
  EXPECT_LT(elapsed, std::chrono::seconds(15));
}

TEST_F(ClusterProcessTest, RestartedWorkerServesANewSession) {
  auto session = NewClusterSession(Config());
  std::vector<Tensor> out;
  const Tensor one = Tensor::FromVector<float>({2}, TensorShape({1, 1}));
  ASSERT_TRUE(session->Run({{"a", one}}, {"c"}, {}, &out).ok());

  const int port = w1_->port();
  w1_->Kill(SIGKILL);
  w1_ = ServerProcess::Start(absl::StrCat("worker=127.0.0.1:0,127.0.0.1:", port), "worker", 1);
  ASSERT_NE(w1_, nullptr);
  ASSERT_EQ(w1_->port(), port);

  // The old session's state on task 1 is gone: the step fails, it does not
  // return stale data.
  absl::Status s = session->Run({{"a", one}}, {"c"}, {}, &out);
  EXPECT_FALSE(s.ok());
  std::cerr << "old session after restart: " << s << "\n";
  EXPECT_THAT(s.message(), HasSubstr("/job:worker/replica:0/task:1"));

  auto fresh = NewClusterSession(Config());
  s = fresh->Run({{"a", one}}, {"c"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<float>()[0], 6.0f);
}

// Sends `bytes` to 127.0.0.1:port on a fresh connection and closes it after
// reading whatever the peer answers within a second.
void SendRaw(int port, const std::string& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char buf[512];
  while (read(fd, buf, sizeof(buf)) > 0) {
  }
  close(fd);
}

TEST_F(ClusterProcessTest, GarbageOnTheSocketLeavesTheServerServing) {
  std::string noise(8192, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 7919 + 13) % 251);
  SendRaw(w0_->port(), noise);
  // A valid HTTP/2 preface followed by frames of nonsense.
  SendRaw(w1_->port(), std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + noise);
  SendRaw(ps_->port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  // Every task still serves a session spanning all three.
  auto session = NewClusterSession(Config());
  std::vector<Tensor> out;
  absl::Status s =
      session->Run({{"a", Tensor::FromVector<float>({3}, TensorShape({1, 1}))}}, {"c"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].flat<float>()[0], 12.0f);  // 3 * 3 + 3
}

TEST_F(ClusterProcessTest, SigtermStopsCleanly) {
  const int status = ps_->Kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Servers whose stderr goes to LOG_DIR/J_T.log.
class LoggedClusterProcessTest : public ClusterProcessTest {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/logged_", getpid());
    mkdir(dir_.c_str(), 0700);
    StartCluster({}, dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Log(const std::string& task) const {
    std::ifstream in(absl::StrCat(dir_, "/", task, ".log"));
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string dir_;
};

// SIGTERM to the master of a session that is open but idle between steps:
// the server says it stops and exits 0. (Its client's idle connection is
// closed once no call is in flight, not waited for until the grace period
// ends.)
TEST_F(LoggedClusterProcessTest, SigtermWithAnIdleSessionOpenStopsCleanly) {
  auto session = NewClusterSession(Config());
  std::vector<Tensor> out;
  ASSERT_TRUE(
      session->Run({{"a", Tensor::FromVector<float>({3}, TensorShape({1, 1}))}}, {"c"}, {}, &out)
          .ok());
  const int status = w0_->Kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_THAT(Log("worker_0"), HasSubstr("distflow server: stopping on SIGTERM"));
}

// A second server on a port another process listens on ends at once with
// exit status 1 and one line naming the address, not gRPC's own error text.
TEST(ServerCommandTest, TakenPortFailsWithOneLineNamingTheAddress) {
  auto first = ServerProcess::Start("ps=127.0.0.1:0", "ps", 0);
  ASSERT_NE(first, nullptr);
  const test::CommandOutput second = test::RunCommandLine(absl::StrCat(
      DISTFLOW_BINARY, " server --cluster ps=", first->address(), " --job ps --task 0 2>&1"));
  EXPECT_EQ(second.exit_code, 1) << second.out;
  EXPECT_EQ(second.out, absl::StrCat("error: Unavailable: cannot listen on ", first->address(),
                                     " for /job:ps/replica:0/task:0: the address is already in "
                                     "use\n"));
  // The first server is untouched and stops cleanly.
  const int status = first->Kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(ClusterProcessTest, FrozenWorkerFailsTheStepNamingIt) {
  auto session = NewClusterSession(Config(/*timeout_ms=*/120000));
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"a", a}}, {"c"}, {}, &out).ok());
  // A frozen process keeps its sockets open: only the keepalive pings on
  // the master's channel notice that nothing answers any more.
  w1_->Freeze();
  absl::Status s = session->Run({{"a", a}}, {"c"}, {}, &out);
  w1_->Kill(SIGKILL);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("/job:worker/replica:0/task:1"));
}

class TokenClusterTest : public ClusterProcessTest {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/token_", getpid());
    mkdir(dir_.c_str(), 0700);
    const std::string file = dir_ + "/token";
    std::ofstream(file) << "  s3cret-cluster-token\n";
    StartCluster({"--token-file", file});
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(TokenClusterTest, StrangersAreRejectedMembersServed) {
  std::unique_ptr<Session> session;
  absl::Status s = TryNewClusterSession(Config(), &session);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_THAT(s.message(), HasSubstr("requires a token"));

  SetProcessToken("not-the-token");
  s = TryNewClusterSession(Config(), &session);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_THAT(s.message(), HasSubstr("token is wrong"));

  // With the token the step crosses all three tasks: the servers carry it
  // to each other too.
  SetProcessToken("s3cret-cluster-token");
  s = TryNewClusterSession(Config(), &session);
  ASSERT_TRUE(s.ok()) << s;
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  std::vector<Tensor> out;
  s = session->Run({{"a", a}}, {"c"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  // c = a.a + a = [[8, 12], [18, 26]].
  EXPECT_EQ(out[0].flat<float>()[0], 8.0f);
  EXPECT_EQ(out[0].flat<float>()[3], 26.0f);
}

// Servers that log a step stuck longer than half a second.
class StuckStepClusterTest : public ClusterProcessTest {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/stuck_", getpid());
    mkdir(dir_.c_str(), 0700);
    StartCluster({"--stuck-step-warn-seconds", "0.5"}, dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(StuckStepClusterTest, DeadlineAndLogNameTheTensorAFrozenTaskOwes) {
  // The master is worker:1, whose c = b + a waits for b from worker:0.
  std::unique_ptr<Session> session;
  absl::Status s = TryNewClusterSession(Config(), &session, w1_.get());
  ASSERT_TRUE(s.ok()) << s;
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"a", a}}, {"c"}, {}, &out).ok());
  w0_->Freeze();
  RunOptions options;
  options.set_timeout_in_ms(2500);
  s = session->Run(options, {{"a", a}}, {"c"}, {}, &out, nullptr);
  w0_->Kill(SIGKILL);
  ASSERT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_THAT(s.message(), HasSubstr("timed out after 2500 ms on /job:worker/replica:0/task:1, "
                                     "waiting for tensor 'edge_"));
  EXPECT_THAT(s.message(), HasSubstr("_b' from /job:worker/replica:0/task:0/device:CPU:0"));

  std::ifstream log_file(dir_ + "/worker_1.log");
  const std::string log((std::istreambuf_iterator<char>(log_file)),
                        std::istreambuf_iterator<char>());
  EXPECT_THAT(log, HasSubstr("on /job:worker/replica:0/task:1 has run for"));
  EXPECT_THAT(log, HasSubstr("_b' from /job:worker/replica:0/task:0/device:CPU:0"));
}

// A CA, the cluster's member certificate and client certificates, made
// with the openssl command: every certificate names 127.0.0.1 and
// localhost.
constexpr char kMakeCertificates[] = R"sh(
set -e
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2"
openssl req -x509 $ec -keyout ca.key -out ca.pem -subj /CN=distflow-test-ca
openssl req -x509 $ec -keyout other_ca.key -out other_ca.pem -subj /CN=another-ca
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' \
  > ext.cnf
sign() {
  openssl req $ec -keyout "$1.key" -out "$1.csr" -subj "/CN=$1"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 \
    -extfile ext.cnf -out "$1.pem"
}
sign member ca
sign client ca
sign stranger other_ca
openssl req -x509 $ec -keyout self.key -out self.pem -subj /CN=self \
  -addext subjectAltName=IP:127.0.0.1,DNS:localhost
)sh";

class TlsClusterTest : public ClusterProcessTest {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/tls_", getpid());
    mkdir(dir_.c_str(), 0700);
    std::ofstream(dir_ + "/make.sh") << kMakeCertificates;
    ASSERT_EQ(std::system(absl::StrCat("cd ", dir_, " && sh make.sh > make.log 2>&1").c_str()), 0)
        << "openssl failed; see " << dir_ << "/make.log";
    std::vector<std::string> flags = {"--tls-cert",         dir_ + "/member.pem", "--tls-key",
                                      dir_ + "/member.key", "--tls-ca",           dir_ + "/ca.pem"};
    for (const std::string& f : ExtraFlags()) flags.push_back(f);
    StartCluster(flags);
  }
  void TearDown() override {
    SetProcessTls(TlsConfig());
    std::filesystem::remove_all(dir_);
  }
  virtual std::vector<std::string> ExtraFlags() { return {}; }

  // The client settings of certificate `name`, trusting the cluster's CA.
  TlsConfig Client(const std::string& name) {
    auto config =
        ReadTlsFiles({dir_ + "/" + name + ".pem", dir_ + "/" + name + ".key", dir_ + "/ca.pem"});
    EXPECT_TRUE(config.ok()) << config.status();
    return config.ok() ? *config : TlsConfig();
  }

  void ExpectServed(const ConfigProto& config) {
    std::unique_ptr<Session> session;
    absl::Status s = TryNewClusterSession(config, &session);
    ASSERT_TRUE(s.ok()) << s;
    Tensor a = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
    std::vector<Tensor> out;
    s = session->Run({{"a", a}}, {"c"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    // c = a.a + a = [[8, 12], [18, 26]]: a crossed from ps:0 to both
    // workers and b from worker:0 to worker:1, all over TLS.
    EXPECT_EQ(out[0].flat<float>()[0], 8.0f);
    EXPECT_EQ(out[0].flat<float>()[3], 26.0f);
  }

  std::string dir_;
};

TEST_F(TlsClusterTest, MemberCertificatesAreServedAcrossTasks) {
  SetProcessTls(Client("client"));
  ExpectServed(Config());
}

TEST_F(TlsClusterTest, StrangersAreRefusedNamingTheServer) {
  TlsConfig no_certificate;
  no_certificate.ca_pem = Client("client").ca_pem;
  TlsConfig self_signed = Client("self");
  TlsConfig other_ca = Client("stranger");
  const std::vector<std::pair<std::string, TlsConfig>> cases = {
      {"no certificate", no_certificate},
      {"self-signed certificate", self_signed},
      {"certificate of another CA", other_ca},
      {"plaintext", TlsConfig()}};
  for (const auto& [what, tls] : cases) {
    SetProcessTls(tls);
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<Session> session;
    absl::Status s = TryNewClusterSession(Config(), &session);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    std::cerr << what << ": " << s << "\n";
    EXPECT_THAT(s.code(), AnyOf(absl::StatusCode::kUnavailable, absl::StatusCode::kUnauthenticated))
        << what << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("master at ", w0_->address()))) << what;
    if (what == "plaintext") {
      EXPECT_THAT(s.message(), HasSubstr("this client speaks plaintext: a server started with "
                                         "--tls-cert refuses it"));
    }
    EXPECT_LT(elapsed, std::chrono::seconds(30)) << what;
  }
  // The refused handshakes left the cluster serving its members.
  SetProcessTls(Client("client"));
  ExpectServed(Config());
}

class TlsTokenClusterTest : public TlsClusterTest {
 protected:
  std::vector<std::string> ExtraFlags() override {
    std::ofstream(dir_ + "/token") << "tls-and-token\n";
    return {"--token-file", dir_ + "/token"};
  }
};

TEST_F(TlsTokenClusterTest, BothAreRequired) {
  SetProcessTls(Client("client"));
  SetProcessToken("wrong");
  std::unique_ptr<Session> session;
  absl::Status s = TryNewClusterSession(Config(), &session);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  SetProcessToken("tls-and-token");
  ExpectServed(Config());
}

// Servers started with small --max-graph-nodes and --max-request-mb.
class LimitsClusterTest : public ClusterProcessTest {
 protected:
  void SetUp() override { StartCluster({"--max-graph-nodes", "2", "--max-request-mb", "1"}); }

  absl::Status CreateOnW0(const GraphDef& g) {
    SessionOptions opts;
    opts.target = absl::StrCat("grpc://", w0_->address());
    opts.config = Config();
    auto session = NewSession(opts);
    if (!session.ok()) return session.status();
    return (*session)->Create(g);
  }
};

TEST_F(LimitsClusterTest, GraphsAndRequestsOverTheLimitsAreRefused) {
  // kGraph has three nodes.
  GraphDef three;
  ASSERT_TRUE(ParseGraphDefText(kGraph, &three).ok());
  absl::Status s = CreateOnW0(three);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("graph has 3 nodes, more than the limit of 2 nodes"));
  EXPECT_THAT(s.message(), HasSubstr("--max-graph-nodes"));

  // Two nodes, but a 2 MiB constant: the request is refused unread.
  GraphDef big;
  NodeDef* c = big.add_node();
  c->set_name("c");
  c->set_op("Const");
  AddNodeAttr("dtype", DT_FLOAT, c);
  Tensor value =
      Tensor::FromVector<float>(std::vector<float>(512 * 1024, 1.f), TensorShape({512 * 1024}));
  AttrValue attr;
  TensorToProto(value, attr.mutable_tensor());
  (*c->mutable_attr())["value"] = attr;
  s = CreateOnW0(big);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("larger than max"));
  EXPECT_THAT(s.message(), HasSubstr("1048576"));

  // Within both limits the cluster serves.
  GraphDef two;
  ASSERT_TRUE(ParseGraphDefText(R"pb(node { name: "a" op: "NoOp" }
                                     node { name: "b" op: "NoOp" input: "^a" })pb",
                                &two)
                  .ok());
  EXPECT_TRUE(CreateOnW0(two).ok());
}

}  // namespace
}  // namespace distflow
