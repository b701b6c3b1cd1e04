// Reference variables: VariableV2 keeps its tensor in the ResourceMgr
// across steps; Assign (with and without validate_shape), AssignAdd,
// AssignSub and IsVariableInitialized work through the reference; updates
// never change a value a reader already holds.
#include <string>

#include "state_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectError;
using test::ExpectTensorEqual;
using test::KernelInput;
using test::StateKernelRunner;

class RefVariableTest : public ::testing::Test {
 protected:
  // Runs VariableV2 node `name` (one "step") and returns its reference.
  KernelInput Variable(const std::string& name, PartialTensorShape shape = PartialTensorShape({2}),
                       DataType dtype = DT_FLOAT) {
    auto run = r_.RunToEnd("VariableV2", {}, {{"dtype", dtype}, {"shape", shape}}, name);
    EXPECT_TRUE(run->status().ok()) << run->status();
    return run->ref_output(0);
  }
  Tensor Value(const KernelInput& ref) {
    absl::ReaderMutexLock l(ref.mu);
    return *ref.ref;
  }
  bool Initialized(const KernelInput& ref) {
    return r_.RunOne("IsVariableInitialized", {ref}, {{"dtype", DT_FLOAT}}).scalar<bool>();
  }
  StateKernelRunner r_;
};

TEST_F(RefVariableTest, PersistsAcrossSteps) {
  KernelInput v = Variable("w");
  EXPECT_FALSE(Initialized(v));
  auto assigned = r_.Run("Assign", {v, AsTensor<float>({1, 2})}, {{"T", DT_FLOAT}});
  ASSERT_TRUE(assigned.ok()) << assigned.status();
  // Assign outputs the reference: its value is the new one.
  ExpectTensorEqual(AsTensor<float>({1, 2}), (*assigned)[0]);
  EXPECT_TRUE(Initialized(v));

  // Another step: the node runs again and finds the same storage.
  KernelInput again = Variable("w");
  EXPECT_EQ(again.ref, v.ref);
  ExpectTensorEqual(AsTensor<float>({1, 2}), Value(again));
  r_.RunOk("AssignAdd", {again, AsTensor<float>({10, 10})}, {{"T", DT_FLOAT}});
  r_.RunOk("AssignSub", {again, AsTensor<float>({1, 2})}, {{"T", DT_FLOAT}});
  ExpectTensorEqual(AsTensor<float>({10, 10}), Value(v));

  // Another variable name is other storage; shared_name overrides the node
  // name.
  KernelInput other = Variable("u");
  EXPECT_NE(other.ref, v.ref);
  auto shared = r_.RunToEnd(
      "VariableV2", {},
      {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({2})}, {"shared_name", "w"}}, "elsewhere");
  EXPECT_EQ(shared->ref_output(0).ref, v.ref);
}

TEST_F(RefVariableTest, AssignValidatesShape) {
  KernelInput v = Variable("w");
  auto bad = r_.Run("Assign", {v, AsTensor<float>({1, 2, 3})}, {{"T", DT_FLOAT}});
  ExpectError(bad.status(), absl::StatusCode::kInvalidArgument, {"[2]", "[3]"});
  EXPECT_FALSE(Initialized(v));
  r_.RunOk("Assign", {v, AsTensor<float>({1, 2, 3})}, {{"T", DT_FLOAT}, {"validate_shape", false}});
  ExpectTensorEqual(AsTensor<float>({1, 2, 3}), Value(v));
  auto add = r_.Run("AssignAdd", {v, AsTensor<float>({1, 2})}, {{"T", DT_FLOAT}});
  ExpectError(add.status(), absl::StatusCode::kInvalidArgument, {"[3]", "[2]"});
}

TEST_F(RefVariableTest, UpdateCopiesASharedBuffer) {
  KernelInput v = Variable("w");
  Tensor value = AsTensor<float>({1, 2});
  r_.RunOk("Assign", {v, value}, {{"T", DT_FLOAT}});
  Tensor snapshot = Value(v);
  r_.RunOk("AssignAdd", {v, AsTensor<float>({1, 1})}, {{"T", DT_FLOAT}});
  ExpectTensorEqual(AsTensor<float>({1, 2}), value);
  ExpectTensorEqual(AsTensor<float>({1, 2}), snapshot);
  ExpectTensorEqual(AsTensor<float>({2, 3}), Value(v));
  r_.RunOk("ApplyGradientDescent", {v, Tensor::Scalar<float>(1), AsTensor<float>({2, 3})},
           {{"T", DT_FLOAT}});
  ExpectTensorEqual(AsTensor<float>({0, 0}), Value(v));
}

TEST_F(RefVariableTest, SameNameOtherDtypeIsRejected) {
  Variable("w");
  auto run = r_.RunToEnd(
      "VariableV2", {},
      {{"dtype", DT_INT32}, {"shape", PartialTensorShape({2})}, {"shared_name", "w"}}, "w_int");
  ExpectError(run->status(), absl::StatusCode::kInvalidArgument, {"'w'", "float32", "int32"});
}

TEST_F(RefVariableTest, RefAndResourceVariablesDoNotCollide) {
  KernelInput v = Variable("w");
  r_.RunOk("Assign", {v, AsTensor<float>({1, 2})}, {{"T", DT_FLOAT}});
  Tensor h =
      r_.RunOne("VarHandleOp", {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({2})}}, "w");
  auto read = r_.Run("ReadVariableOp", {h}, {{"dtype", DT_FLOAT}});
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace distflow
