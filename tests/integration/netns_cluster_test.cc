// The main job across hosts: `distflow train` as the chief on one network
// namespace, a ps and two workers on three others (NetnsHosts), each with
// its own address and nothing shared but the bridge. The cluster comes from
// TF_CONFIG as the Kubeflow training operator writes it for every task, or
// from --cluster. Through faults: a worker cut off for longer than the call
// deadline and healed, 5 % packet loss on every link, the ps killed twice
// and restored from its checkpoints, a wrong worker address, mutual TLS with
// a certificate per host. Each run ends with
// exit 0, the accuracy floor, and no process left on the hosts. Skips, saying
// why, where namespaces cannot be made. Every run is bounded (kRunDeadline).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "netns_hosts.h"
#include "nlohmann/json.hpp"

namespace distflow {
namespace {

using test::NetnsHosts;
using ::testing::HasSubstr;

constexpr auto kRunDeadline = std::chrono::seconds(240);
constexpr auto kStartDeadline = std::chrono::seconds(30);
constexpr char kFashionMnist[] = "/usr/share/datasets/fashion-mnist";
constexpr int kChief = 0, kPs = 1, kWorker0 = 2, kWorker1 = 3;
constexpr int kPort = 2222;

std::string Entry(int host) { return NetnsHosts::Address(host) + ":" + std::to_string(kPort); }

std::string ClusterFlag() {
  return "ps=" + Entry(kPs) + ";worker=" + Entry(kWorker0) + "," + Entry(kWorker1);
}

// TF_CONFIG for `type`/`index`, as the training operator's TFJob sets it on
// every replica: the whole cluster, the chief included.
std::string TfConfig(const std::string& type, int index) {
  return R"({"cluster": {"chief": [")" + Entry(kChief) + R"("], "ps": [")" + Entry(kPs) +
         R"("], "worker": [")" + Entry(kWorker0) + R"(", ")" + Entry(kWorker1) +
         R"("]}, "task": {"type": ")" + type + R"(", "index": )" + std::to_string(index) + "}}";
}

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

// The last line of `out` as JSON (null when there is none).
nlohmann::json LastJson(const std::string& out) {
  std::string s = out;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return nlohmann::json::parse(s.substr(s.rfind('\n') + 1), nullptr, false);
}

// Progress lines of `err` from `from` on.
int ProgressLines(const std::string& err, size_t from) {
  int lines = 0;
  for (size_t at = err.find("\nepoch ", from); at != std::string::npos;
       at = err.find("\nepoch ", at + 1)) {
    ++lines;
  }
  return lines;
}

class NetnsClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(std::string(kFashionMnist) + "/train-images-idx3-ubyte.gz")) {
      GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("netns_cluster_test_" + std::to_string(getpid()) + "_" + test);
    std::filesystem::create_directories(dir_);
    std::string why;
    // Namespace names: short (interface and file names), unique per test
    // and process.
    hosts_ =
        NetnsHosts::Create("df" + test.substr(0, 12) + "-" + std::to_string(getpid()), 4, &why);
    if (hosts_ == nullptr) GTEST_SKIP() << "no test hosts on this machine: " << why;
  }
  void TearDown() override {
    hosts_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Starts `distflow server` for job/task on `host`, from TF_CONFIG or the
  // cluster flag; its pid, or -1 when it does not listen within
  // kStartDeadline.
  pid_t StartServer(int host, const std::string& job, int task, bool tf_config,
                    const std::vector<std::string>& extra = {}) {
    const std::string base = Path(job + std::to_string(task));
    std::vector<std::string> args = {"server"}, env;
    args.insert(args.end(), extra.begin(), extra.end());
    if (tf_config) {
      env.push_back("TF_CONFIG=" + TfConfig(job, task));
    } else {
      args.insert(args.end(),
                  {"--cluster", ClusterFlag(), "--job", job, "--task", std::to_string(task)});
    }
    const pid_t pid = hosts_->Spawn(host, DISTFLOW_BINARY, args, base + ".out", base + ".err", env);
    if (pid <= 0 ||
        !NetnsHosts::WaitForText(base + ".out", "listening on " + Entry(host), kStartDeadline)) {
      ADD_FAILURE() << job << " " << task << " did not start: " << NetnsHosts::Slurp(base + ".err");
      return -1;
    }
    return pid;
  }
  // The ps and both workers; false when one did not start.
  bool StartServers(bool tf_config, const std::vector<std::string>& extra = {}) {
    ps_ = StartServer(kPs, "ps", 0, tf_config, extra);
    w0_ = StartServer(kWorker0, "worker", 0, tf_config, extra);
    w1_ = StartServer(kWorker1, "worker", 1, tf_config, extra);
    return ps_ > 0 && w0_ > 0 && w1_ > 0;
  }
  // Ends the servers with SIGTERM (as a cluster manager does) and checks
  // that they went and nothing else runs on the hosts.
  void StopServersAndCheckNothingIsLeft() {
    for (pid_t* pid : {&ps_, &w0_, &w1_}) {
      if (*pid > 0) {
        const int status = hosts_->Kill(*pid, SIGTERM);
        EXPECT_TRUE(WIFEXITED(status)) << "a server did not end by itself on SIGTERM";
      }
      *pid = -1;
    }
    EXPECT_EQ(hosts_->ProcessesLeft(), "");
  }

  // Runs `distflow train args` on the chief's host; `while_running` gets
  // the stderr so far every 50 ms.
  Outcome RunChief(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                   const std::function<void(const std::string&)>& while_running = nullptr) {
    std::vector<std::string> argv = {"train"};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string out = Path("chief.out"), err = Path("chief.err");
    const pid_t pid = hosts_->Spawn(kChief, DISTFLOW_BINARY, argv, out, err, env);
    Outcome o;
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + kRunDeadline;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ADD_FAILURE() << "distflow train ran past the deadline and was killed";
        break;
      }
      if (while_running) while_running(NetnsHosts::Slurp(err));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    hosts_->Forget(pid);
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    o.out = NetnsHosts::Slurp(out);
    o.err = NetnsHosts::Slurp(err);
    return o;
  }

  std::filesystem::path dir_;
  std::unique_ptr<NetnsHosts> hosts_;
  pid_t ps_ = -1, w0_ = -1, w1_ = -1;
};

// Every task reads TF_CONFIG, the chief's own entry included. The servers
// ask for grpc+verbs: its shared-memory provider serves only tasks of one
// host, so between these hosts tensors go over gRPC.
TEST_F(NetnsClusterTest, MainJobAcrossFourHostsFromTfConfig) {
  ASSERT_TRUE(StartServers(/*tf_config=*/true, {"--protocol", "grpc+verbs"}));
  Outcome o =
      RunChief({"--epochs", "2", "--output", "json"}, {"TF_CONFIG=" + TfConfig("chief", 0)});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = LastJson(o.out);
  std::cerr << j.dump() << "\n";
  EXPECT_THAT(o.err, HasSubstr("training on 1 ps and 2 workers"));
  EXPECT_EQ(j["steps"], 2 * 938);
  EXPECT_EQ(j["closures"], 2 * (938 + 10));
  EXPECT_EQ(j["worker_failures"], 0);
  EXPECT_GE(j["test_accuracy"].get<double>(), 0.85);
  StopServersAndCheckNothingIsLeft();
}

// Worker 1 is cut off from every host for longer than the call deadline:
// its closure runs again on worker 0, and after the heal it comes back.
TEST_F(NetnsClusterTest, PartitionedWorkerIsLostAndRejoinsAfterTheHeal) {
  ASSERT_TRUE(StartServers(/*tf_config=*/false));
  bool cut = false, healed = false;
  std::chrono::steady_clock::time_point cut_at;
  Outcome o = RunChief(
      {"--cluster", ClusterFlag(), "--epochs", "3", "--call-timeout", "2", "--progress-every", "50",
       "--output", "json"},
      {}, [&](const std::string& err) {
        if (!cut && err.find("step 100/") != std::string::npos) {
          for (int host : {kChief, kPs, kWorker0}) {
            ASSERT_TRUE(hosts_->Partition(kWorker1, host));
          }
          cut = true;
          cut_at = std::chrono::steady_clock::now();
        }
        if (cut && !healed && std::chrono::steady_clock::now() - cut_at > std::chrono::seconds(4)) {
          ASSERT_TRUE(hosts_->Heal());
          healed = true;
        }
      });
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_TRUE(cut && healed) << "the job ended before the partition healed:\n" << o.err;
  const nlohmann::json j = LastJson(o.out);
  std::cerr << j.dump() << "\n";
  EXPECT_GE(j["worker_failures"].get<int>(), 1);
  EXPECT_GE(j["recoveries"].get<int>(), 1);
  EXPECT_GE(j["retried_closures"].get<int>(), 1);
  EXPECT_GE(j["steps"].get<int>(), 3 * 938);
  EXPECT_GE(j["test_accuracy"].get<double>(), 0.85);
  EXPECT_THAT(o.err, HasSubstr("coordinator: worker task 1 at " + Entry(kWorker1) + " failed"));
  StopServersAndCheckNothingIsLeft();
}

// 5 % of the packets every host receives are dropped, on every link.
TEST_F(NetnsClusterTest, MainJobRidesThroughFivePercentPacketLoss) {
  ASSERT_TRUE(StartServers(/*tf_config=*/false));
  ASSERT_TRUE(hosts_->Loss(5));
  // Lost packets cost retransmission timeouts per call, so fewer, larger
  // steps: 3 epochs of 235 batches of 256.
  Outcome o = RunChief({"--cluster", ClusterFlag(), "--epochs", "3", "--batch-size", "256",
                        "--learning-rate", "0.003", "--output", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = LastJson(o.out);
  std::cerr << j.dump() << "\n";
  EXPECT_GE(j["steps"].get<int>(), 3 * 235);
  EXPECT_GE(j["test_accuracy"].get<double>(), 0.85);
  ASSERT_TRUE(hosts_->Heal());
  StopServersAndCheckNothingIsLeft();
}

// The ps host's task dies twice (SIGKILL) and whatever runs it on a real
// cluster starts it again at its address a second later, empty: each time
// the coordinator stops dispatch, waits for it, the chief restores the last
// checkpoint onto it, and training resumes. Each restore loses what ran
// since the newest checkpoint listed; the kills come right after a progress
// line, which here follows a snapshot at once, so the write of that
// snapshot may still be in flight and die with the ps (one interval more
// for that restore; docs/training.md states the bound).
TEST_F(NetnsClusterTest, PsKilledTwiceIsRestoredFromItsCheckpoints) {
  ASSERT_TRUE(StartServers(/*tf_config=*/false));
  constexpr int kInterval = 50;
  int kills = 0;
  std::chrono::steady_clock::time_point killed_at;
  bool restarting = false;
  Outcome o = RunChief(
      {"--cluster", ClusterFlag(), "--epochs", "2", "--call-timeout", "3", "--checkpoint-dir",
       Path("ckpt"), "--checkpoint-every-steps", std::to_string(kInterval), "--ps-recovery-timeout",
       "60", "--progress-every", "50", "--output", "json"},
      {}, [&](const std::string& err) {
        // Kill once training is under way, and again once the first
        // recovery shows in the progress line.
        const size_t recovered = err.find("ps recoveries 1");
        const bool time_to_kill = (kills == 0 && ProgressLines(err, 0) >= 4) ||
                                  (kills == 1 && !restarting && recovered != std::string::npos &&
                                   ProgressLines(err, recovered) >= 4);
        if (time_to_kill) {
          hosts_->Kill(ps_, SIGKILL);
          ps_ = -1;
          ++kills;
          restarting = true;
          killed_at = std::chrono::steady_clock::now();
        }
        if (restarting && std::chrono::steady_clock::now() - killed_at > std::chrono::seconds(1)) {
          ps_ = StartServer(kPs, "ps", 0, /*tf_config=*/false);
          restarting = false;
        }
      });
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(kills, 2) << o.err;
  const nlohmann::json j = LastJson(o.out);
  std::cerr << j.dump() << "\n";
  EXPECT_EQ(j["ps_recoveries"], 2);
  EXPECT_EQ(j["ps_failures"], 2);
  // One interval per kill for a write it took with it, and the steps
  // between the snapshots and the kills (the harness reacts within a few).
  EXPECT_LE(j["steps_lost"].get<int>(), (kills + 1) * kInterval);
  EXPECT_GE(j["checkpoints"].get<int>(), 2);
  EXPECT_EQ(j["steps"], 2 * 938);
  EXPECT_GE(j["test_accuracy"].get<double>(), 0.85);
  EXPECT_THAT(o.err, HasSubstr("parameter server /job:ps/replica:0/task:0 at " + Entry(kPs) +
                               " is back and was restored from the last checkpoint"));
  StopServersAndCheckNothingIsLeft();
}

// A mistyped worker port, or a host that does not exist: the chief says
// what it awaits and why while it waits, then fails at the startup deadline
// naming the task and address, with no TLS hint.
TEST_F(NetnsClusterTest, WrongWorkerAddressFailsAtTheStartupDeadline) {
  ASSERT_TRUE(StartServers(/*tf_config=*/false));
  struct Case {
    std::string entry, why;
    // A refused connection fails within a second, so the waiting line
    // shows before the deadline; a host that does not exist takes the
    // kernel's neighbour discovery for each try, longer than this deadline.
    bool waiting_line;
  };
  for (const Case& c : {Case{NetnsHosts::Address(kWorker1) + ":2223", "connection refused", true},
                        Case{"192.0.2.200:2222", "no route to the host", false}}) {
    const std::string cluster = "ps=" + Entry(kPs) + ";worker=" + Entry(kWorker0) + "," + c.entry;
    // Epochs enough to outlast the deadline: two take about 7 s on a
    // quiet machine, and a job that ends first has nothing to fail.
    Outcome o = RunChief({"--cluster", cluster, "--startup-deadline", "8", "--epochs", "50"});
    EXPECT_EQ(o.exit_code, 1) << o.err;
    if (c.waiting_line) {
      EXPECT_THAT(o.err,
                  HasSubstr("coordinator: waiting for worker /job:worker/replica:0/task:1 at " +
                            c.entry + ", which has not answered yet: " + c.why));
    }
    EXPECT_THAT(o.err,
                HasSubstr("error: Unavailable: worker /job:worker/replica:0/task:1 at " + c.entry +
                          " never answered within the startup deadline of 8s: " + c.why));
    EXPECT_THAT(o.err, ::testing::Not(HasSubstr("--tls-cert")));
  }
  StopServersAndCheckNothingIsLeft();
}

// Mutual TLS with a certificate per host, each naming only its own host's
// address: every task checks the address it dials against the peer's
// certificate, so the per-host names must be right for the job to run.
TEST_F(NetnsClusterTest, MutualTlsWithACertificatePerHost) {
  std::string script = R"sh(
set -e
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2"
openssl req -x509 $ec -keyout ca.key -out ca.pem -subj /CN=netns-test-ca
for i in 0 1 2 3; do
  printf 'subjectAltName=IP:192.0.2.%d\nextendedKeyUsage=serverAuth,clientAuth\n' $((i + 1)) > ext$i.cnf
  openssl req $ec -keyout host$i.key -out host$i.csr -subj /CN=host$i
  openssl x509 -req -in host$i.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile ext$i.cnf -out host$i.pem
done
)sh";
  std::ofstream(Path("certs.sh")) << script;
  const test::CommandOutput made =
      test::RunCommandLine("cd " + dir_.string() + " && sh certs.sh > certs.log 2>&1");
  ASSERT_EQ(made.exit_code, 0) << NetnsHosts::Slurp(Path("certs.log"));
  auto tls_flags = [&](int host) {
    return std::vector<std::string>{"--tls-cert", Path("host" + std::to_string(host) + ".pem"),
                                    "--tls-key",  Path("host" + std::to_string(host) + ".key"),
                                    "--tls-ca",   Path("ca.pem")};
  };
  ps_ = StartServer(kPs, "ps", 0, /*tf_config=*/false, tls_flags(kPs));
  w0_ = StartServer(kWorker0, "worker", 0, /*tf_config=*/false, tls_flags(kWorker0));
  w1_ = StartServer(kWorker1, "worker", 1, /*tf_config=*/false, tls_flags(kWorker1));
  ASSERT_TRUE(ps_ > 0 && w0_ > 0 && w1_ > 0);
  const std::vector<std::string> chief_tls = {"DISTFLOW_TLS_CERT=" + Path("host0.pem"),
                                              "DISTFLOW_TLS_KEY=" + Path("host0.key"),
                                              "DISTFLOW_TLS_CA=" + Path("ca.pem")};
  Outcome o = RunChief({"--cluster", ClusterFlag(), "--epochs", "1", "--train-limit", "6400",
                        "--test-limit", "2000", "--output", "json"},
                       chief_tls);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = LastJson(o.out);
  EXPECT_EQ(j["steps"], 100);
  EXPECT_GT(j["test_accuracy"].get<double>(), 0.7);
  // Without the client certificate the chief is refused.
  Outcome plain = RunChief({"--cluster", ClusterFlag(), "--epochs", "1", "--train-limit", "640",
                            "--startup-deadline", "3"});
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_THAT(plain.err, HasSubstr("Unavailable"));
  StopServersAndCheckNothingIsLeft();
}

// Worker 1 loses only its link to the ps, for longer than the call
// deadline: the chief still reaches the ps with its state, so the ps is not
// restored — the worker is the one that failed, and it rejoins after the heal.
TEST_F(NetnsClusterTest, WorkerCutOffFromThePsIsAFailedWorker) {
  ASSERT_TRUE(StartServers(/*tf_config=*/false));
  bool cut = false, healed = false;
  std::chrono::steady_clock::time_point cut_at;
  Outcome o = RunChief(
      {"--cluster", ClusterFlag(), "--epochs", "3", "--call-timeout", "2", "--checkpoint-dir",
       Path("ckpt"), "--progress-every", "50", "--output", "json"},
      {}, [&](const std::string& err) {
        if (!cut && ProgressLines(err, 0) >= 2) {
          ASSERT_TRUE(hosts_->Partition(kWorker1, kPs));
          cut = true;
          cut_at = std::chrono::steady_clock::now();
        }
        if (cut && !healed && std::chrono::steady_clock::now() - cut_at > std::chrono::seconds(4)) {
          ASSERT_TRUE(hosts_->Heal());
          healed = true;
        }
      });
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_TRUE(cut && healed) << "the job ended before the partition healed:\n" << o.err;
  const nlohmann::json j = LastJson(o.out);
  std::cerr << j.dump() << "\n";
  EXPECT_GE(j["worker_failures"].get<int>(), 1);
  EXPECT_EQ(j["ps_recoveries"], 0);
  EXPECT_EQ(j["steps_lost"], 0);
  // A closure whose update reached the ps before the cut is run again.
  EXPECT_GE(j["steps"].get<int>(), 3 * 938);
  EXPECT_LE(j["steps"].get<int>(), 3 * 938 + j["retried_closures"].get<int>());
  EXPECT_GE(j["test_accuracy"].get<double>(), 0.85);
  EXPECT_THAT(o.err, HasSubstr("coordinator: worker task 1 at " + Entry(kWorker1) + " failed"));
  StopServersAndCheckNothingIsLeft();
}

}  // namespace
}  // namespace distflow
