// The process's memory budget seen from a session: a Fill beyond it fails
// with ResourceExhausted naming the node, the shape and the budget, and the
// same session then runs a small step; freed tensors return their bytes.
#include <string>
#include <vector>

#include "distflow/common_runtime/session.h"
#include "distflow/core/memory_budget.h"
#include "distflow/graph/graph_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// big = Fill([dims], 1.0) and small = Fill([2], 1.0).
constexpr char kGraph[] = R"pb(
  node {
    name: "dims"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_INT32 }
    }
  }
  node {
    name: "one"
    op: "Const"
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
          float_val: 1
        }
      }
    }
  }
  node {
    name: "big"
    op: "Fill"
    input: "dims"
    input: "one"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
)pb";

class MemoryBudgetSessionTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = memory_budget::Limit(); }
  void TearDown() override { memory_budget::SetLimit(saved_); }
  int64_t saved_ = 0;
};

TEST_F(MemoryBudgetSessionTest, FillBeyondTheBudgetFailsThenSmallStepsRun) {
  memory_budget::SetLimit(64 << 20);
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok());
  GraphDef g;
  ASSERT_TRUE(ParseGraphDefText(kGraph, &g).ok());
  ASSERT_TRUE((*session)->Create(g).ok());
  const int64_t before = memory_budget::InUse();

  // 8192 x 4096 floats: 128 MiB, twice the budget.
  std::vector<Tensor> out;
  absl::Status s =
      (*session)->Run({{"dims", Tensor::FromVector<int32_t>({8192, 4096})}}, {"big"}, {}, &out);
  ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("node 'big'"));
  EXPECT_THAT(s.message(), HasSubstr("[8192,4096]"));
  EXPECT_THAT(s.message(), HasSubstr("memory budget of 67108864 bytes"));

  // The same session runs a step that fits, and its tensors count while
  // they live.
  s = (*session)->Run({{"dims", Tensor::FromVector<int32_t>({1024, 1024})}}, {"big"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flat<float>()[1024 * 1024 - 1], 1.0f);
  EXPECT_GE(memory_budget::InUse(), before + 4 * 1024 * 1024);
  out.clear();
  EXPECT_LT(memory_budget::InUse(), before + 4 * 1024 * 1024);

  // Without a budget the big Fill runs.
  memory_budget::SetLimit(0);
  s = (*session)->Run({{"dims", Tensor::FromVector<int32_t>({8192, 4096})}}, {"big"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace distflow
