// Conditional control flow in the executor: Switch leaves the branch not
// taken dead, deadness follows data and control edges (and crosses devices
// through _Send/_Recv), and Merge forwards the live branch. The graph is the
// one TensorFlow's tf.cond writes.
#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/str_replace.h"
#include "distflow/common_runtime/session.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// out = p ? x * 2 : -x, as tf.cond(p, lambda: x * 2, lambda: -x) writes it:
// the true branch's constant hangs off the branch's pivot by a control edge.
// DEVICE_T is replaced by the true branch's device.
constexpr char kCond[] = R"pb(
  node {
    name: "x"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "p"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_BOOL }
    }
  }
  node {
    name: "cond/Switch"
    op: "Switch"
    input: "p"
    input: "p"
    attr {
      key: "T"
      value { type: DT_BOOL }
    }
  }
  node {
    name: "cond/switch_t"
    op: "Identity"
    input: "cond/Switch:1"
    attr {
      key: "T"
      value { type: DT_BOOL }
    }
  }
  node {
    name: "cond/pred_id"
    op: "Identity"
    input: "p"
    attr {
      key: "T"
      value { type: DT_BOOL }
    }
  }
  node {
    name: "cond/mul/y"
    op: "Const"
    input: "^cond/switch_t"
    device: "DEVICE_T"
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
          float_val: 2
        }
      }
    }
  }
  node {
    name: "cond/mul/Switch"
    op: "Switch"
    input: "x"
    input: "cond/pred_id"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "cond/mul"
    op: "Mul"
    input: "cond/mul/Switch:1"
    input: "cond/mul/y"
    device: "DEVICE_T"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "cond/Neg/Switch"
    op: "Switch"
    input: "x"
    input: "cond/pred_id"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "cond/Neg"
    op: "Neg"
    input: "cond/Neg/Switch"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "cond/Merge"
    op: "Merge"
    input: "cond/Neg"
    input: "cond/mul"
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

std::unique_ptr<Session> CondSession(int devices, const std::string& true_branch_device) {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = devices;
  auto session = NewSession(options);
  EXPECT_TRUE(session.ok()) << session.status();
  GraphDef g;
  EXPECT_TRUE(
      ParseGraphDefText(absl::StrReplaceAll(kCond, {{"DEVICE_T", true_branch_device}}), &g).ok());
  absl::Status s = (*session)->Create(g);
  EXPECT_TRUE(s.ok()) << s;
  return *std::move(session);
}

Tensor X(float v) { return Tensor::FromVector<float>({v, -2 * v}, TensorShape({2})); }
Tensor P(bool v) { return Tensor::Scalar<bool>(v); }

void ExpectCond(Session* session, bool p, float x) {
  std::vector<Tensor> out;
  absl::Status s =
      session->Run({{"x", X(x)}, {"p", P(p)}}, {"cond/Merge", "cond/Merge:1"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  const float k = p ? 2.0f : -1.0f;
  EXPECT_EQ(out[0].flat<float>()[0], k * x);
  EXPECT_EQ(out[0].flat<float>()[1], k * -2 * x);
  EXPECT_EQ(out[1].scalar<int32_t>(), p ? 1 : 0);
}

TEST(ControlFlowTest, CondTakesTheBranchThePredicatePicks) {
  auto session = CondSession(1, "");
  ExpectCond(session.get(), true, 3);
  ExpectCond(session.get(), false, 3);
  // Alternating runs reuse the executor's state: nothing of the last step's
  // branch leaks into the next.
  for (int i = 0; i < 50; ++i) ExpectCond(session.get(), i % 3 == 0, static_cast<float>(i));
}

TEST(ControlFlowTest, DeadnessCrossesDevices) {
  auto session = CondSession(2, "/device:CPU:1");
  for (int i = 0; i < 20; ++i) ExpectCond(session.get(), i % 2 == 0, static_cast<float>(i + 1));
}

TEST(ControlFlowTest, FetchingTheBranchNotTakenIsAnError) {
  auto session = CondSession(1, "");
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"x", X(1)}, {"p", P(false)}}, {"cond/mul"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("cond/mul"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("dead"));
  // The taken branch is fetched fine.
  ASSERT_TRUE(session->Run({{"x", X(1)}, {"p", P(false)}}, {"cond/Neg"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[0], -1.0f);
}

TEST(ControlFlowTest, NonScalarPredicateIsAnError) {
  auto session = CondSession(1, "");
  std::vector<Tensor> out;
  absl::Status s =
      session->Run({{"x", X(1)}, {"p", Tensor::FromVector<bool>({true, false}, TensorShape({2}))}},
                   {"cond/Merge"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("cond/"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("scalar"));
}

TEST(ControlFlowTest, ConcurrentRunsEachTakeTheirOwnBranch) {
  auto session = CondSession(2, "/device:CPU:1");
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const bool p = (i + t) % 2 == 0;
        const float x = static_cast<float>(t * 100 + i);
        std::vector<Tensor> out;
        absl::Status s = session->Run({{"x", X(x)}, {"p", P(p)}}, {"cond/Merge"}, {}, &out);
        if (!s.ok() || out[0].flat<float>()[0] != (p ? 2 * x : -x)) bad++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(ControlFlowTest, MergeWaitsForItsControlInputs) {
  // A Merge with a control input from a node that needs the other branch's
  // input: it must not run before that node, whatever arrives first.
  GraphDef g;
  ASSERT_TRUE(ParseGraphDefText(R"pb(
                                  node {
                                    name: "a"
                                    op: "Placeholder"
                                    attr {
                                      key: "dtype"
                                      value { type: DT_FLOAT }
                                    }
                                  }
                                  node {
                                    name: "gate"
                                    op: "Placeholder"
                                    attr {
                                      key: "dtype"
                                      value { type: DT_FLOAT }
                                    }
                                  }
                                  node {
                                    name: "slow"
                                    op: "Square"
                                    input: "gate"
                                    attr {
                                      key: "T"
                                      value { type: DT_FLOAT }
                                    }
                                  }
                                  node {
                                    name: "m"
                                    op: "Merge"
                                    input: "a"
                                    input: "a"
                                    input: "^slow"
                                    attr {
                                      key: "T"
                                      value { type: DT_FLOAT }
                                    }
                                    attr {
                                      key: "N"
                                      value { i: 2 }
                                    }
                                  }
                                )pb",
                                &g)
                  .ok());
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(g).ok());
  std::vector<Tensor> out;
  absl::Status s =
      (*session)->Run({{"a", Tensor::Scalar<float>(5)}, {"gate", Tensor::Scalar<float>(1)}},
                      {"m", "m:1"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), 5.0f);
  EXPECT_EQ(out[1].scalar<int32_t>(), 0);  // the first live input wins
  // Without the control input's own input the step cannot run at all.
  s = (*session)->Run({{"a", Tensor::Scalar<float>(5)}}, {"m"}, {}, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("gate"));
}

}  // namespace
}  // namespace distflow
