// What a stranger on the network can make a `distflow server` process hold:
// receives for steps that never run are dropped at their caller's deadline,
// so memory stays flat however many come.
#include <netinet/in.h>
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
  ReceiveFlood flood(server->address());
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

}  // namespace
}  // namespace distflow
