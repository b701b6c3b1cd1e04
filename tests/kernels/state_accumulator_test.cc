// Conditional accumulators in both forms: the mean of the gradients of the
// current step, stale gradients dropped, a take that waits for enough
// gradients (released from another thread or cancelled), SUM reduction,
// global step control, and shape errors.
#include <string>
#include <thread>
#include <vector>

#include "state_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectError;
using test::ExpectTensorNear;
using test::KernelInput;
using test::KernelRun;
using test::StateKernelRunner;

// Runs each test on the TensorFlow 1 form (Ref(string) handle, false) and
// the resource form (true).
class AccumulatorTest : public ::testing::TestWithParam<bool> {
 protected:
  std::string Op(const std::string& base) const { return GetParam() ? "Resource" + base : base; }
  KernelInput Accumulator(const std::string& reduction = "MEAN", const std::string& name = "acc") {
    auto run = r_.RunToEnd(
        GetParam() ? "ResourceConditionalAccumulator" : "ConditionalAccumulator", {},
        {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({2})}, {"reduction_type", reduction}},
        name);
    EXPECT_TRUE(run->status().ok()) << run->status();
    if (GetParam()) return run->outputs()[0];
    return run->ref_output(0);
  }
  absl::Status Apply(const KernelInput& acc, int64_t local_step, const Tensor& grad) {
    return r_
        .Run(Op("AccumulatorApplyGradient"), {acc, Tensor::Scalar<int64_t>(local_step), grad},
             {{"dtype", DT_FLOAT}})
        .status();
  }
  std::shared_ptr<KernelRun> StartTake(const KernelInput& acc, int32_t num_required,
                                       CancellationManager* cm = nullptr) {
    return r_.Start(Op("AccumulatorTakeGradient"), {acc, Tensor::Scalar<int32_t>(num_required)},
                    {{"dtype", DT_FLOAT}}, "take", cm);
  }
  int32_t NumAccumulated(const KernelInput& acc) {
    return r_.RunOne(Op("AccumulatorNumAccumulated"), {acc}, {}).scalar<int32_t>();
  }
  void SetGlobalStep(const KernelInput& acc, int64_t step) {
    r_.RunOk(Op("AccumulatorSetGlobalStep"), {acc, Tensor::Scalar<int64_t>(step)}, {});
  }
  StateKernelRunner r_;
};

TEST_P(AccumulatorTest, MeanOfCurrentGradientsDropsStaleOnes) {
  KernelInput acc = Accumulator();
  ASSERT_TRUE(Apply(acc, 0, AsTensor<float>({1, 2})).ok());
  ASSERT_TRUE(Apply(acc, 0, AsTensor<float>({3, 6})).ok());
  EXPECT_EQ(NumAccumulated(acc), 2);
  auto take = StartTake(acc, 2);
  ASSERT_TRUE(take->WaitFor(absl::Seconds(10)));
  ASSERT_TRUE(take->status().ok()) << take->status();
  ExpectTensorNear(AsTensor<float>({2, 4}), take->outputs()[0]);
  // The take moved the global step to 1: a gradient of step 0 is stale.
  EXPECT_EQ(NumAccumulated(acc), 0);
  ASSERT_TRUE(Apply(acc, 0, AsTensor<float>({100, 100})).ok());
  EXPECT_EQ(NumAccumulated(acc), 0);
  ASSERT_TRUE(Apply(acc, 1, AsTensor<float>({1, 1})).ok());
  ASSERT_TRUE(Apply(acc, 5, AsTensor<float>({3, 5})).ok());
  auto second = StartTake(acc, 2);
  ASSERT_TRUE(second->WaitFor(absl::Seconds(10)));
  ExpectTensorNear(AsTensor<float>({2, 3}), second->outputs()[0]);
}

TEST_P(AccumulatorTest, TakeWaitsForEnoughGradients) {
  KernelInput acc = Accumulator();
  auto take = StartTake(acc, 2);
  ASSERT_TRUE(Apply(acc, 0, AsTensor<float>({1, 1})).ok());
  EXPECT_FALSE(take->WaitFor(absl::Milliseconds(50)));
  std::thread replica([&] { EXPECT_TRUE(Apply(acc, 0, AsTensor<float>({3, 3})).ok()); });
  ASSERT_TRUE(take->WaitFor(absl::Seconds(10)));
  replica.join();
  ASSERT_TRUE(take->status().ok()) << take->status();
  ExpectTensorNear(AsTensor<float>({2, 2}), take->outputs()[0]);
}

TEST_P(AccumulatorTest, CancelledTakeEndsWithCancelled) {
  KernelInput acc = Accumulator();
  CancellationManager cm;
  auto take = StartTake(acc, 1, &cm);
  EXPECT_FALSE(take->WaitFor(absl::Milliseconds(50)));
  cm.StartCancel();
  ASSERT_TRUE(take->WaitFor(absl::Seconds(10)));
  ExpectError(take->status(), absl::StatusCode::kCancelled, {"'acc'"});
  // The cancelled take did not consume the next gradient.
  ASSERT_TRUE(Apply(acc, 0, AsTensor<float>({1, 1})).ok());
  EXPECT_EQ(NumAccumulated(acc), 1);
}

TEST_P(AccumulatorTest, SumReductionAndGlobalStep) {
  KernelInput acc = Accumulator("SUM", "sum_acc");
  SetGlobalStep(acc, 10);
  ASSERT_TRUE(Apply(acc, 9, AsTensor<float>({5, 5})).ok());  // stale
  ASSERT_TRUE(Apply(acc, 10, AsTensor<float>({1, 2})).ok());
  ASSERT_TRUE(Apply(acc, 11, AsTensor<float>({1, 2})).ok());
  auto take = StartTake(acc, 2);
  ASSERT_TRUE(take->WaitFor(absl::Seconds(10)));
  ExpectTensorNear(AsTensor<float>({2, 4}), take->outputs()[0]);
  ASSERT_TRUE(Apply(acc, 10, AsTensor<float>({1, 2})).ok());  // stale: step is 11
  EXPECT_EQ(NumAccumulated(acc), 0);
}

TEST_P(AccumulatorTest, Errors) {
  KernelInput acc = Accumulator();
  ExpectError(Apply(acc, 0, AsTensor<float>({1, 2, 3})), absl::StatusCode::kInvalidArgument,
              {"'acc'", "[2]", "[3]"});
  auto take = StartTake(acc, 0);
  ASSERT_TRUE(take->WaitFor(absl::Seconds(10)));
  ExpectError(take->status(), absl::StatusCode::kInvalidArgument, {"num_required"});
  auto other = r_.Run(
      GetParam() ? "ResourceConditionalAccumulator" : "ConditionalAccumulator", {},
      {{"dtype", DT_DOUBLE}, {"shape", PartialTensorShape({2})}, {"shared_name", "acc"}}, "other");
  ExpectError(other.status(), absl::StatusCode::kInvalidArgument, {"'acc'"});
}

INSTANTIATE_TEST_SUITE_P(RefAndResource, AccumulatorTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Resource" : "Ref";
                         });

}  // namespace
}  // namespace distflow
