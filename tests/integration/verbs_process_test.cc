// Real `distflow server` processes with --protocol grpc+verbs on loopback:
// tensors of remote receives move over verbs channels on the shared-memory
// provider. Covers the same graphs as over plain gRPC with the same values,
// a peer started without verbs, buffer growth (1 KiB then 64 MiB through one
// channel), string and dead tensors, the buffer-size limit, a step aborted
// while a transfer is due, and a producer killed mid-transfer.
#include <signal.h>

#include <chrono>
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

// b = a x a on task 0, c = b + a on task 1 (a fed on task 0); n = Size of
// Fill(dims, v) made on task 0 and counted on task 1; s, a string made on
// task 0, echoed on task 1; m = Merge on task 1 of a dead branch from task 0
// and a constant; never = a dequeue on task 0 from a queue nobody fills,
// read on task 1 as never_read (a transfer that stays due until the step's
// deadline).
constexpr char kGraph[] = R"pb(
  node {
    name: "q"
    op: "FIFOQueueV2"
    device: "/job:worker/task:0"
    attr {
      key: "component_types"
      value { list { type: DT_FLOAT } }
    }
  }
  node {
    name: "never"
    op: "QueueDequeueV2"
    input: "q"
    device: "/job:worker/task:0"
    attr {
      key: "component_types"
      value { list { type: DT_FLOAT } }
    }
  }
  node {
    name: "never_read"
    op: "Identity"
    input: "never"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "a"
    op: "Placeholder"
    device: "/job:worker/task:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
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
    name: "big_copy"
    op: "Identity"
    input: "big"
    device: "/job:worker/task:1"
    attr {
      key: "T"
      value { type: DT_FLOAT }
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
          string_val: "over"
          string_val: "verbs"
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
  explicit Cluster(std::vector<std::string> extra) {
    w0_ = ServerProcess::Start("worker=127.0.0.1:0,127.0.0.1:0", "worker", 0, extra);
    w1_ = ServerProcess::Start("worker=127.0.0.1:0,127.0.0.1:0", "worker", 1, extra);
  }
  bool ok() const { return w0_ != nullptr && w1_ != nullptr; }

  // The session's master is task `master`.
  std::unique_ptr<Session> NewClusterSession(int64_t timeout_ms = 30000, int master = 0) {
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

TEST(VerbsProcessTest, SameValuesAsGrpc) {
  Cluster verbs({"--protocol", "grpc+verbs"});
  Cluster grpc({"--protocol", "grpc"});
  ASSERT_TRUE(verbs.ok());
  ASSERT_TRUE(grpc.ok());
  auto over_verbs = verbs.NewClusterSession();
  auto over_grpc = grpc.NewClusterSession();
  const Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({3, 3}));
  for (int step = 0; step < 3; ++step) {
    std::vector<Tensor> v, g;
    absl::Status s = over_verbs->Run({{"a", a}, {"dims", Dims(1000 + step)}},
                                     {"c", "n", "s", "m", "m:1"}, {}, &v);
    ASSERT_TRUE(s.ok()) << s;
    s = over_grpc->Run({{"a", a}, {"dims", Dims(1000 + step)}}, {"c", "n", "s", "m", "m:1"}, {},
                       &g);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(v.size(), g.size());
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(v[i].DebugString(100), g[i].DebugString(100)) << "fetch " << i;
    }
    EXPECT_EQ(v[0].flat<float>()[0], 31.0f);
    EXPECT_EQ(v[1].scalar<int64_t>(), 1000 + step);
    EXPECT_EQ(v[2].flat<std::string>()[1], "verbs");
    EXPECT_EQ(v[3].scalar<float>(), 7.0f);  // the dead branch crossed as dead
    EXPECT_EQ(v[4].scalar<int32_t>(), 1);
  }
}

// A grpc+verbs task receiving from a task started without the flag keeps
// gRPC for it.
TEST(VerbsProcessTest, PeerWithoutVerbsIsReachedOverGrpc) {
  auto w0 = ServerProcess::Start("worker=127.0.0.1:0,127.0.0.1:0", "worker", 0, {});
  auto w1 = ServerProcess::Start("worker=127.0.0.1:0,127.0.0.1:0", "worker", 1,
                                 {"--protocol", "grpc+verbs"});
  ASSERT_NE(w0, nullptr);
  ASSERT_NE(w1, nullptr);
  auto spec = ClusterSpec::FromFlag(absl::StrCat("worker=", w0->address(), ",", w1->address()));
  ASSERT_TRUE(spec.ok());
  SessionOptions opts;
  opts.target = absl::StrCat("grpc://", w1->address());
  *opts.config.mutable_cluster_def() = spec->def();
  opts.config.set_operation_timeout_in_ms(30000);
  auto session = NewSession(opts);
  ASSERT_TRUE(session.ok()) << session.status();
  GraphDef g;
  ASSERT_TRUE(ParseGraphDefText(kGraph, &g).ok());
  ASSERT_TRUE((*session)->Create(g).ok());
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run({{"dims", Dims(5000)}}, {"n", "s"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<int64_t>(), 5000);
  EXPECT_EQ(out[1].flat<std::string>()[0], "over");
}

TEST(VerbsProcessTest, OneKibThenSixtyFourMibThroughOneChannel) {
  Cluster verbs({"--protocol", "grpc+verbs"});
  ASSERT_TRUE(verbs.ok());
  auto session = verbs.NewClusterSession();
  for (int64_t elements : {int64_t{256}, int64_t{16} << 20, int64_t{256}, int64_t{16} << 20}) {
    std::vector<Tensor> out;
    absl::Status s = session->Run({{"dims", Dims(elements)}}, {"big_copy"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(out[0].NumElements(), elements);
    EXPECT_EQ(out[0].flat<float>()[0], 3.0f);
    EXPECT_EQ(out[0].flat<float>()[elements - 1], 3.0f);
  }
}

TEST(VerbsProcessTest, BufferLargerThanTheMaximumIsResourceExhausted) {
  Cluster verbs({"--protocol", "grpc+verbs", "--verbs-max-buffer-mb", "1"});
  ASSERT_TRUE(verbs.ok());
  auto session = verbs.NewClusterSession();
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"dims", Dims(1 << 20)}}, {"n"}, {}, &out);  // 4 MiB
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("maximum"));
  EXPECT_THAT(s.message(), HasSubstr(kTask0));
  // Tensors under the limit still cross on the same session.
  s = session->Run({{"dims", Dims(1000)}}, {"n"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<int64_t>(), 1000);
}

TEST(VerbsProcessTest, StepAbortedWhileTheTransferIsDue) {
  Cluster verbs({"--protocol", "grpc+verbs"});
  ASSERT_TRUE(verbs.ok());
  auto session = verbs.NewClusterSession(/*timeout_ms=*/300);
  // Task 1 asks for `never` while task 0 waits on an empty queue: the step
  // times out with the request outstanding, whatever the machine's speed.
  std::vector<Tensor> out;
  absl::Status s = session->Run({}, {"never_read"}, {}, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.code(), AnyOf(absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kCancelled,
                              absl::StatusCode::kAborted));
  // The channel and its buffers serve the next steps.
  auto again = verbs.NewClusterSession();
  const Tensor small = Tensor::FromVector<float>({2}, TensorShape({1, 1}));
  for (int i = 0; i < 3; ++i) {
    s = again->Run({{"a", small}}, {"c"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].flat<float>()[0], 6.0f);
  }
}

TEST(VerbsProcessTest, ProducerKilledMidTransfer) {
  Cluster verbs({"--protocol", "grpc+verbs"});
  ASSERT_TRUE(verbs.ok());
  // The master is the consumer's task, so that the producer's death
  // reaches the client through the consumer's verbs channel.
  auto session = verbs.NewClusterSession(/*timeout_ms=*/20000, /*master=*/1);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"dims", Dims(10)}}, {"n"}, {}, &out).ok());
  absl::Status s;
  const auto start = std::chrono::steady_clock::now();
  std::thread runner([&] {
    std::vector<Tensor> big;
    for (int i = 0; i < 200 && s.ok(); ++i) {
      s = session->Run({{"dims", Dims(int64_t{16} << 20)}}, {"n"}, {}, &big);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  verbs.w0()->Kill(SIGKILL);
  runner.join();
  ASSERT_FALSE(s.ok());
  std::cerr << "step error after SIGKILL: " << s << "\n";
  EXPECT_THAT(s.code(), AnyOf(absl::StatusCode::kUnavailable, absl::StatusCode::kAborted));
  EXPECT_THAT(s.message(), HasSubstr(kTask0));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  // The consumer survived: it still answers.
  EXPECT_EQ(kill(verbs.w1()->pid(), 0), 0);
}

}  // namespace
}  // namespace distflow
