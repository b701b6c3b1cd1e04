// Real `distflow server` processes on loopback with the tensor side channel
// on (the default) and off: the same values either way for large, bool,
// string and dead tensors; a producer killed mid-transfer fails the step
// naming it; a step whose producer freezes mid-transfer ends at its deadline
// and the consumer serves the next steps.
#include <signal.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/common_runtime/session.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server_process.h"

namespace distflow {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr char kTask0[] = "/job:worker/replica:0/task:0";

// y = Identity(x) from task 0 to task 1; n = Size of Fill(dims, 3) made on
// task 0 and counted on task 1; s, a string from task 0 echoed on task 1;
// m = Merge on task 1 of a dead branch from task 0 and a constant.
constexpr char kGraph[] = R"pb(
  node {
    name: "x"
    op: "Placeholder"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "y"
    op: "Identity"
    input: "x"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "dims"
    op: "Placeholder"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_INT64 }
    }
  }
  node {
    name: "v"
    op: "Const"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape {}
          float_val: 3
        }
      }
    }
  }
  node {
    name: "big"
    op: "Fill"
    input: "dims"
    input: "v"
    device: "/job:worker/task:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
    attr {
      key: "index_type"
      value { type: DT_INT64 }
    }
  }
  node {
    name: "n"
    op: "Size"
    input: "big"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
    attr {
      key: "out_type"
      value { type: DT_INT64 }
    }
  }
  node {
    name: "str"
    op: "Const"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_STRING }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_STRING
          tensor_shape { dim { size: 2 } }
          string_val: "beside"
          string_val: "grpc"
        }
      }
    }
  }
  node {
    name: "s"
    op: "Identity"
    input: "str"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_STRING }
    }
  }
  node {
    name: "pred"
    op: "Const"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_BOOL }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_BOOL
          tensor_shape {}
          bool_val: false
        }
      }
    }
  }
  node {
    name: "sw"
    op: "Switch"
    input: "v"
    input: "pred"
    device: "/job:worker/task:0"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "other"
    op: "Const"
    device: "/job:worker/task:1"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape {}
          float_val: 7
        }
      }
    }
  }
  node {
    name: "m"
    op: "Merge"
    input: "sw:1"
    input: "other"
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

class Cluster {
 public:
  explicit Cluster(std::vector<std::string> extra = {}) {
    w0_ = ServerProcess::Start("worker=127.0.0.1:0,127.0.0.1:0", "worker", 0, extra);
    w1_ = ServerProcess::Start("worker=127.0.0.1:0,127.0.0.1:0", "worker", 1, extra);
  }
  bool ok() const { return w0_ != nullptr && w1_ != nullptr; }

  // The session's master is task `master`.
  std::unique_ptr<Session> NewClusterSession(int64_t timeout_ms = 60000, int master = 0) {
    auto spec = ClusterSpec::FromFlag(absl::StrCat("worker=", w0_->address(), ",", w1_->address()));
    EXPECT_TRUE(spec.ok());
    SessionOptions opts;
    opts.target = absl::StrCat("grpc://", (master == 0 ? w0_ : w1_)->address());
    *opts.config.mutable_cluster_def() = spec->def();
    opts.config.set_operation_timeout_in_ms(timeout_ms);
    auto session = NewSession(opts);
    EXPECT_TRUE(session.ok()) << session.status();
    GraphDef g;
    EXPECT_TRUE(ParseGraphDefText(kGraph, &g).ok());
    EXPECT_TRUE((*session)->Create(g).ok());
    return std::move(*session);
  }

  ServerProcess* w0() { return w0_.get(); }
  ServerProcess* w1() { return w1_.get(); }

 private:
  std::unique_ptr<ServerProcess> w0_, w1_;
};

Tensor Dims(int64_t n) { return Tensor::FromVector<int64_t>({n}); }

// A float tensor of `n` elements holding 0, 1, 2, ... (exact below 2^24).
Tensor Pattern(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  float* p = t.base<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i);
  return t;
}

TEST(SideChannelProcessTest, SameValuesWithTheSideChannelOnAndOff) {
  Cluster on;
  Cluster off({"--tensor-side-channel", "off"});
  ASSERT_TRUE(on.ok());
  ASSERT_TRUE(off.ok());
  auto with = on.NewClusterSession();
  auto without = off.NewClusterSession();
  for (const int64_t n : {int64_t{1000}, int64_t{1} << 20, (int64_t{16} << 20) - 3}) {
    const Tensor x = Pattern(n);
    for (Session* session : {with.get(), without.get()}) {
      std::vector<Tensor> out;
      absl::Status s =
          session->Run({{"x", x}, {"dims", Dims(n)}}, {"y", "n", "s", "m", "m:1"}, {}, &out);
      ASSERT_TRUE(s.ok()) << s;
      ASSERT_EQ(out[0].NumElements(), n);
      EXPECT_EQ(std::memcmp(out[0].raw_data(), x.raw_data(), x.TotalBytes()), 0) << n;
      EXPECT_EQ(out[0].flat<float>()[n - 1], static_cast<float>(n - 1));
      EXPECT_EQ(out[1].scalar<int64_t>(), n);
      EXPECT_EQ(out[2].flat<std::string>()[1], "grpc");
      EXPECT_EQ(out[3].scalar<float>(), 7.0f);  // the dead branch crossed as dead
      EXPECT_EQ(out[4].scalar<int32_t>(), 1);
    }
  }
}

TEST(SideChannelProcessTest, FlagValuesAreChecked) {
  auto bad =
      ServerProcess::Start("worker=127.0.0.1:0", "worker", 0, {"--tensor-side-channel", "maybe"});
  EXPECT_EQ(bad, nullptr);
}

TEST(SideChannelProcessTest, ProducerKilledMidTransfer) {
  Cluster cluster;
  ASSERT_TRUE(cluster.ok());
  // The master is the consumer's task, so the producer's death reaches the
  // client through the consumer.
  auto session = cluster.NewClusterSession(/*timeout_ms=*/60000, /*master=*/1);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"dims", Dims(10)}}, {"n"}, {}, &out).ok());
  absl::Status s;
  std::thread runner([&] {
    std::vector<Tensor> big;
    for (int i = 0; i < 200 && s.ok(); ++i) {
      s = session->Run({{"dims", Dims(int64_t{16} << 20)}}, {"n"}, {}, &big);  // 64 MiB
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  cluster.w0()->Kill(SIGKILL);
  runner.join();
  ASSERT_FALSE(s.ok());
  std::cerr << "step error after SIGKILL: " << s << "\n";
  EXPECT_THAT(s.code(), AnyOf(absl::StatusCode::kUnavailable, absl::StatusCode::kAborted));
  EXPECT_THAT(s.message(), HasSubstr(kTask0));
  // The consumer survived.
  EXPECT_EQ(kill(cluster.w1()->pid(), 0), 0);
}

TEST(SideChannelProcessTest, StepWithAFrozenProducerEndsAtItsDeadline) {
  Cluster cluster;
  ASSERT_TRUE(cluster.ok());
  auto session = cluster.NewClusterSession(/*timeout_ms=*/3000, /*master=*/1);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"dims", Dims(10)}}, {"n"}, {}, &out).ok());
  absl::Status s;
  std::thread runner([&] {
    std::vector<Tensor> big;
    for (int i = 0; i < 200 && s.ok(); ++i) {
      s = session->Run({{"dims", Dims(int64_t{16} << 20)}}, {"n"}, {}, &big);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  cluster.w0()->Freeze();
  runner.join();
  cluster.w0()->Signal(SIGCONT);
  ASSERT_FALSE(s.ok());
  std::cerr << "step error with the producer stopped: " << s << "\n";
  EXPECT_THAT(s.code(), AnyOf(absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kCancelled,
                              absl::StatusCode::kAborted, absl::StatusCode::kUnavailable));
  // Both tasks serve the next steps, large tensors included.
  auto again = cluster.NewClusterSession(/*timeout_ms=*/60000, /*master=*/1);
  const Tensor x = Pattern(4 << 20);
  for (int i = 0; i < 2; ++i) {
    absl::Status r = again->Run({{"x", x}}, {"y"}, {}, &out);
    ASSERT_TRUE(r.ok()) << r;
    EXPECT_EQ(std::memcmp(out[0].raw_data(), x.raw_data(), x.TotalBytes()), 0);
  }
}

}  // namespace
}  // namespace distflow
