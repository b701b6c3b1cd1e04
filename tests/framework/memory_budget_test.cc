// core/memory_budget.h through Tensor::Allocate: reservations up to the
// budget, a refusal beyond it naming the budget, bytes returned on free,
// and nothing counted without a budget.
#include "distflow/core/memory_budget.h"

#include "distflow/framework/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

class MemoryBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = memory_budget::Limit(); }
  void TearDown() override { memory_budget::SetLimit(saved_); }
  int64_t saved_ = 0;
};

TEST_F(MemoryBudgetTest, AllocationsCountUntilFreed) {
  memory_budget::SetLimit(1 << 20);
  const int64_t base = memory_budget::InUse();
  Tensor a, b, c;
  ASSERT_TRUE(Tensor::Allocate(DT_FLOAT, TensorShape({100000}), &a, "a").ok());
  EXPECT_EQ(memory_budget::InUse(), base + 400000);
  ASSERT_TRUE(Tensor::Allocate(DT_FLOAT, TensorShape({100000}), &b, "b").ok());
  absl::Status s = Tensor::Allocate(DT_FLOAT, TensorShape({100000}), &c, "c");
  ASSERT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("shape [100000]"));
  EXPECT_THAT(s.message(), HasSubstr("for node 'c'"));
  EXPECT_THAT(s.message(), HasSubstr("400000 more bytes do not fit"));
  EXPECT_THAT(s.message(), HasSubstr("memory budget of 1048576 bytes"));
  EXPECT_EQ(memory_budget::InUse(), base + 800000);
  a = Tensor();
  EXPECT_EQ(memory_budget::InUse(), base + 400000);
  ASSERT_TRUE(Tensor::Allocate(DT_FLOAT, TensorShape({100000}), &c, "c").ok());
  // A copy shares the buffer: no new bytes.
  Tensor copy = c;
  EXPECT_EQ(memory_budget::InUse(), base + 800000);
  b = Tensor();
  c = Tensor();
  copy = Tensor();
  EXPECT_EQ(memory_budget::InUse(), base);
}

TEST_F(MemoryBudgetTest, TheConstructorThrowsBeyondTheBudget) {
  memory_budget::SetLimit(1024);
  EXPECT_THROW(Tensor(DT_FLOAT, TensorShape({1024})), std::bad_alloc);
  EXPECT_NO_THROW(Tensor(DT_FLOAT, TensorShape({16})));
}

TEST_F(MemoryBudgetTest, NothingIsCountedWithoutABudget) {
  memory_budget::SetLimit(0);
  const int64_t base = memory_budget::InUse();
  Tensor a;
  ASSERT_TRUE(Tensor::Allocate(DT_FLOAT, TensorShape({1 << 20}), &a).ok());
  EXPECT_EQ(memory_budget::InUse(), base);
  // A tensor allocated before a budget is set gives back nothing when freed.
  memory_budget::SetLimit(1 << 20);
  a = Tensor();
  EXPECT_EQ(memory_budget::InUse(), base);
}

}  // namespace
}  // namespace distflow
