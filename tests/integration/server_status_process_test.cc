// `distflow server --status-port`: the server's page, JSON and Prometheus
// metrics, read from a real server process while a client runs steps on
// it: sessions, the memory budget, and each RPC method's calls, errors and
// latency; with a token, the pages ask for it.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distflow/common_runtime/session.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/distributed_runtime/rpc/grpc_session.h"
#include "distflow/framework/tensor_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "http_get.h"
#include "nlohmann/json.hpp"
#include "server_process.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The status page's port, from the "status page on http://HOST:PORT/" line
// the server writes to `stderr_path`; 0 when none comes within 20 s.
int StatusPort(const std::string& stderr_path) {
  const std::string mark = "status page on http://127.0.0.1:";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(stderr_path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const size_t at = s.find(mark);
    if (at != std::string::npos) {
      const size_t from = at + mark.size();
      const size_t slash = s.find('/', from);
      int port = 0;
      if (slash != std::string::npos && absl::SimpleAtoi(s.substr(from, slash - from), &port)) {
        return port;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

// A session on `server`'s master for the cluster "worker=ADDRESSES".
// The samples of a Prometheus text page: "name{labels}" -> value.
std::map<std::string, double> Samples(const std::string& page) {
  std::map<std::string, double> samples;
  std::istringstream in(page);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    double value;
    if (space != std::string::npos && absl::SimpleAtod(line.substr(space + 1), &value)) {
      samples[line.substr(0, space)] = value;
    }
  }
  return samples;
}

std::unique_ptr<Session> SessionOn(const ServerProcess& server, std::string addresses = "",
                                   int64_t timeout_ms = 30000) {
  if (addresses.empty()) addresses = server.address();
  SessionOptions opts;
  opts.target = absl::StrCat("grpc://", server.address());
  absl::StatusOr<ClusterSpec> own = ClusterSpec::FromFlag("worker=" + addresses);
  if (!own.ok()) return nullptr;
  *opts.config.mutable_cluster_def() = own->def();
  opts.config.set_operation_timeout_in_ms(timeout_ms);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(opts);
  return session.ok() ? *std::move(session) : nullptr;
}

TEST(ServerStatusTest, PagesShowSessionsBudgetAndRpcs) {
  const std::string err = ::testing::TempDir() + "/server_status_stderr.txt";
  auto server = ServerProcess::Start("worker=127.0.0.1:0", "worker", 0,
                                     {"--status-port", "0", "--memory-budget-mb", "64"}, err);
  ASSERT_NE(server, nullptr);
  const int port = StatusPort(err);
  ASSERT_GT(port, 0);

  std::unique_ptr<Session> session = SessionOn(*server);
  ASSERT_NE(session, nullptr);
  GraphDef g;
  NodeDef* x = g.add_node();
  x->set_name("x");
  x->set_op("Placeholder");
  (*x->mutable_attr())["dtype"].set_type(DT_FLOAT);
  NodeDef* y = g.add_node();
  y->set_name("y");
  y->set_op("Mul");
  y->add_input("x");
  y->add_input("x");
  (*y->mutable_attr())["T"].set_type(DT_FLOAT);
  ASSERT_TRUE(session->Create(g).ok());
  Tensor three(DT_FLOAT, TensorShape({}));
  three.scalar<float>() = 3;
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(session->Run({{"x", three}}, {"y"}, {}, &out).ok());
    EXPECT_EQ(out[0].scalar<float>(), 9.0f);
  }
  const std::map<std::string, double> before = Samples(HttpGet(port, "/metrics").body);
  EXPECT_FALSE(session->Run({{"x", three}}, {"nope"}, {}, &out).ok());
  const std::map<std::string, double> after = Samples(HttpGet(port, "/metrics").body);
  // Counters (and a histogram's buckets, count and sum) only grow.
  int counters = 0;
  for (const auto& [name, value] : before) {
    const std::string family = name.substr(0, name.find('{'));
    const bool counter = absl::EndsWith(family, "_total") || absl::EndsWith(family, "_count") ||
                         absl::EndsWith(family, "_bucket") || absl::EndsWith(family, "_sum");
    if (!counter) continue;
    ++counters;
    ASSERT_TRUE(after.count(name)) << name;
    EXPECT_GE(after.at(name), value) << name;
  }
  EXPECT_GT(counters, 40);
  EXPECT_EQ(after.at("distflow_rpc_server_errors_total{method=\"RunStep\"}"),
            before.at("distflow_rpc_server_errors_total{method=\"RunStep\"}") + 1);

  HttpResponse r = HttpGet(port, "/api/status");
  ASSERT_EQ(r.status, 200);
  nlohmann::json j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["task"], "/job:worker/replica:0/task:0");
  EXPECT_EQ(j["port"], server->port());
  EXPECT_EQ(j["master_sessions"], 1);
  EXPECT_EQ(j["memory"]["budget_bytes"], int64_t{64} << 20);
  EXPECT_GT(j["memory"]["resident_bytes"].get<int64_t>(), 0);
  bool saw_run_step = false;
  for (const auto& m : j["rpcs"]) {
    if (m["method"] != "RunStep") continue;
    saw_run_step = true;
    EXPECT_EQ(m["calls"], 4);
    EXPECT_EQ(m["errors"], 1);
    EXPECT_GT(m["mean_ms"].get<double>(), 0.0);
  }
  EXPECT_TRUE(saw_run_step) << r.body;

  r = HttpGet(port, "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_THAT(r.body,
              HasSubstr("distflow_rpc_server_latency_seconds_count{method=\"RunStep\"} 4\n"));
  EXPECT_THAT(r.body, HasSubstr("distflow_rpc_server_errors_total{method=\"RunStep\"} 1\n"));
  EXPECT_THAT(
      r.body,
      HasSubstr("distflow_server_master_sessions{task=\"/job:worker/replica:0/task:0\"} 1\n"));
  if (std::system("command -v promtool >/dev/null 2>&1") == 0) {
    const std::string file = ::testing::TempDir() + "/server_status_metrics.txt";
    std::ofstream(file) << r.body;
    EXPECT_EQ(std::system(("promtool check metrics < " + file).c_str()), 0);
  }

  r = HttpGet(port, "/");
  ASSERT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("<title>distflow server</title>"));
  EXPECT_THAT(r.body, Not(HasSubstr("$STYLE$")));
  EXPECT_THAT(r.body, Not(HasSubstr("$HELPERS$")));

  ASSERT_TRUE(session->Close().ok());
  j = nlohmann::json::parse(HttpGet(port, "/api/status").body);
  EXPECT_EQ(j["master_sessions"], 0);
}

// A step of worker 0 whose input comes from a frozen worker 1 is listed
// with its age and the Recv key it waits for, which names worker 1.
TEST(ServerStatusTest, AStuckStepIsShownWithTheKeyItWaitsFor) {
  const std::string err = ::testing::TempDir() + "/server_status_stuck_stderr.txt";
  auto w0 = ServerProcess::Start("worker=127.0.0.1:0", "worker", 0, {"--status-port", "0"}, err);
  ASSERT_NE(w0, nullptr);
  const int port = StatusPort(err);
  ASSERT_GT(port, 0);
  auto w1 =
      ServerProcess::Start(absl::StrCat("worker=", w0->address(), ",127.0.0.1:0"), "worker", 1);
  ASSERT_NE(w1, nullptr);
  std::unique_ptr<Session> session =
      SessionOn(*w0, absl::StrCat(w0->address(), ",", w1->address()), 5000);
  ASSERT_NE(session, nullptr);
  GraphDef g;
  NodeDef* c = g.add_node();
  c->set_name("c");
  c->set_op("Const");
  c->set_device("/job:worker/replica:0/task:1");
  (*c->mutable_attr())["dtype"].set_type(DT_FLOAT);
  TensorToProto(Tensor::Scalar<float>(4), (*c->mutable_attr())["value"].mutable_tensor());
  NodeDef* y = g.add_node();
  y->set_name("y");
  y->set_op("Square");
  y->add_input("c");
  y->set_device("/job:worker/replica:0/task:0");
  (*y->mutable_attr())["T"].set_type(DT_FLOAT);
  ASSERT_TRUE(session->Create(g).ok());
  std::vector<Tensor> out;
  absl::Status first = session->Run({}, {"y"}, {}, &out);
  ASSERT_TRUE(first.ok()) << first;
  EXPECT_EQ(out[0].scalar<float>(), 16.0f);
  // Worker 0 received c's 4 bytes from worker 1 over gRPC.
  bool received = false;
  const nlohmann::json moved = nlohmann::json::parse(HttpGet(port, "/api/status").body);
  for (const auto& t : moved["transfers"]) {
    if (t["peer"] == "/job:worker/replica:0/task:1" && t["transport"] == "grpc" &&
        t["direction"] == "received") {
      received = true;
      EXPECT_EQ(t["tensors"], 1);
      EXPECT_EQ(t["bytes"], 4);
    }
  }
  EXPECT_TRUE(received) << moved["transfers"];
  EXPECT_THAT(HttpGet(port, "/metrics").body,
              HasSubstr("distflow_tensor_bytes_total{peer=\"/job:worker/replica:0/task:1\","
                        "transport=\"grpc\",direction=\"received\"} 4\n"));

  w1->Freeze();
  absl::Status stuck;
  std::thread step([&] {
    std::vector<Tensor> o;
    stuck = session->Run({}, {"y"}, {}, &o);
  });
  nlohmann::json seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  while (std::chrono::steady_clock::now() < deadline) {
    nlohmann::json j = nlohmann::json::parse(HttpGet(port, "/api/status").body);
    if (!j["running_steps"].empty() && !j["running_steps"][0]["waiting_for"].empty()) {
      seen = j["running_steps"][0];
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  step.join();
  w1->Kill(SIGKILL);
  EXPECT_FALSE(stuck.ok());
  ASSERT_FALSE(seen.is_null()) << "the page never listed the stuck step";
  EXPECT_GE(seen["age_seconds"].get<double>(), 0.0);
  EXPECT_THAT(seen["waiting_for"][0].get<std::string>(), HasSubstr("/job:worker/replica:0/task:1"));
  nlohmann::json after = nlohmann::json::parse(HttpGet(port, "/api/status").body);
  EXPECT_TRUE(after["running_steps"].empty()) << after["running_steps"];
}

TEST(ServerStatusTest, PagesAskForTheServersToken) {
  const std::string token_file = ::testing::TempDir() + "/server_status_token";
  { std::ofstream(token_file) << "s3cret-token-0123456789abcdef\n"; }
  const std::string err = ::testing::TempDir() + "/server_status_token_stderr.txt";
  auto server = ServerProcess::Start("worker=127.0.0.1:0", "worker", 0,
                                     {"--status-port", "0", "--token-file", token_file}, err);
  ASSERT_NE(server, nullptr);
  const int port = StatusPort(err);
  ASSERT_GT(port, 0);
  EXPECT_EQ(HttpGet(port, "/api/status").status, 401);
  EXPECT_EQ(
      HttpGet(port, "/metrics", "Authorization: Bearer s3cret-token-0123456789abcdef\r\n").status,
      200);
}

}  // namespace
}  // namespace distflow
