// The ops added for gradients, run in a session: StridedSliceGrad,
// UnsortedSegmentSum and InvertPermutation values, shapes and errors.
#include "distflow/cc/ops/grad_ops.h"

#include <string>
#include <vector>

#include "distflow/cc/ops/standard_ops.h"
#include "distflow/common_runtime/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Runs `fetch` over the scope's graph.
absl::StatusOr<Tensor> Evaluate(const Scope& scope, const Output& fetch) {
  GraphDef graph;
  if (absl::Status s = scope.ToGraphDef(&graph); !s.ok()) return s;
  auto session = NewSession(SessionOptions());
  if (!session.ok()) return session.status();
  if (absl::Status s = (*session)->Create(graph); !s.ok()) return s;
  std::vector<Tensor> out;
  if (absl::Status s = (*session)->Run({}, {fetch.name()}, {}, &out); !s.ok()) {
    return s;
  }
  return out[0];
}

template <typename T>
std::vector<T> Flat(const Tensor& t) {
  auto f = t.flat<T>();
  return std::vector<T>(f.begin(), f.end());
}

TEST(GradOpsTest, StridedSliceGradWritesDyIntoTheBox) {
  Scope scope = Scope::NewRootScope();
  // x[1:, ::-2] of a 3x4 input is 2x2, read from columns 3 and 1.
  auto g = ops::StridedSliceGrad(scope, {3, 4}, {1, 0}, {0, 0}, {1, -2}, {{1.f, 2.f}, {3.f, 4.f}},
                                 ops::StridedSliceGrad::EndMask(3).BeginMask(2));
  ASSERT_TRUE(scope.ok()) << scope.status();
  EXPECT_EQ(scope.refiner()->OutputShape(g.node(), 0).DebugString(), "[3,4]");
  auto out = Evaluate(scope, g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Flat<float>(*out), ElementsAre(0, 0, 0, 0, 0, 2, 0, 1, 0, 4, 0, 3));
}

TEST(GradOpsTest, StridedSliceGradWithShrinkAndNewAxis) {
  Scope scope = Scope::NewRootScope();
  // x[newaxis, 1] of a 2x3 input is [1, 3].
  auto g = ops::StridedSliceGrad(scope, {2, 3}, {0, 1}, {0, 2}, {1, 1}, {{7, 8, 9}},
                                 ops::StridedSliceGrad::NewAxisMask(1).ShrinkAxisMask(2));
  auto out = Evaluate(scope, g);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Flat<int32_t>(*out), ElementsAre(0, 0, 0, 7, 8, 9));
}

TEST(GradOpsTest, StridedSliceGradRejectsDyOfTheWrongShape) {
  Scope scope = Scope::NewRootScope();
  Output shape = ops::Placeholder(scope, DT_INT32);
  Output g = ops::StridedSliceGrad(scope, shape, {0}, {2}, {1}, {1.f, 2.f, 3.f});
  ASSERT_TRUE(scope.ok());
  GraphDef graph;
  ASSERT_TRUE(scope.ToGraphDef(&graph).ok());
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE((*session)->Create(graph).ok());
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run(
      {{shape.name(), Tensor::FromVector<int32_t>(std::vector<int32_t>{4})}}, {g.name()}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("dy has shape [3]"));
}

TEST(GradOpsTest, UnsortedSegmentSumAddsRowsAndDropsNegativeIds) {
  Scope scope = Scope::NewRootScope();
  auto sum = ops::UnsortedSegmentSum(scope, {{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}, {7.0, 8.0}},
                                     {2, 0, 2, -1}, 4);
  EXPECT_EQ(scope.refiner()->OutputShape(sum.node(), 0).DebugString(), "[4,2]");
  auto out = Evaluate(scope, sum);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Flat<double>(*out), ElementsAre(3, 4, 0, 0, 6, 8, 0, 0));
}

TEST(GradOpsTest, UnsortedSegmentSumRejectsAnIdOutOfRange) {
  Scope scope = Scope::NewRootScope();
  auto sum = ops::UnsortedSegmentSum(scope, {1.f, 2.f}, {0, 3}, 2);
  auto out = Evaluate(scope, sum);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("segment_ids[1] = 3 is not in [0, num_segments = 2)"));
}

TEST(GradOpsTest, UnsortedSegmentSumShapeFunctionChecksThePrefix) {
  Scope scope = Scope::NewRootScope();
  ops::UnsortedSegmentSum(scope, {{1.f, 2.f}}, {0, 1}, 2);
  EXPECT_EQ(scope.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(scope.status().message()), HasSubstr("is not a prefix of data shape"));
}

TEST(GradOpsTest, InvertPermutation) {
  Scope scope = Scope::NewRootScope();
  auto out = Evaluate(scope, ops::InvertPermutation(scope, {2, 0, 3, 1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Flat<int32_t>(*out), ElementsAre(1, 3, 0, 2));

  Scope bad = Scope::NewRootScope();
  auto err = Evaluate(bad, ops::InvertPermutation(bad, {0, 0}));
  EXPECT_EQ(err.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(err.status().message()),
              HasSubstr("x[1] = 0 is out of [0, 2) or repeated"));
}

}  // namespace
}  // namespace distflow
