// OpKernelContext::forward_input_to_output as the forwarding kernels
// (Identity, Switch, Merge, Enter, Exit, NextIteration) use it: an input the
// executor owns moves into the output, any other is shared, a reference
// stays a reference.
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "kernel_test_util.h"

namespace distflow {
namespace {

std::unique_ptr<OpKernel> MakeKernel(const std::string& op) {
  NodeDef def;
  def.set_name("forward");
  def.set_op(op);
  def.add_input("in");
  AttrValue t;
  SetAttrValue(DT_FLOAT, &t);
  (*def.mutable_attr())["T"] = t;
  AddDefaultsToNodeDef(OpRegistry::Global()->LookUp(op)->op_def, &def);
  auto kernel = KernelRegistry::Global()->CreateKernel(test::TestDevice(), def);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? *std::move(kernel) : nullptr;
}

// Runs `kernel` on the one input `in` and returns its output 0.
TensorValue RunOn(OpKernel* kernel, TensorValue in, std::unique_ptr<OpKernelContext>* ctx,
                  OpKernelContext::Params* params) {
  params->op_kernel = kernel;
  params->device = test::TestDevice();
  params->inputs = &in;
  params->num_inputs = 1;
  *ctx = std::make_unique<OpKernelContext>(params);
  kernel->Compute(ctx->get());
  EXPECT_TRUE((*ctx)->status().ok()) << (*ctx)->status();
  return (*ctx)->output_value(0);
}

TEST(ForwardInputTest, AnOwnedInputMovesIntoTheOutput) {
  for (const char* op : {"Identity", "Enter", "Exit", "NextIteration"}) {
    SCOPED_TRACE(op);
    std::unique_ptr<OpKernel> kernel = MakeKernel(op);
    ASSERT_NE(kernel, nullptr);
    Tensor in = test::AsTensor<float>({1, 2, 3}, {3});
    void* const data = in.raw_data();
    TensorValue v(&in);
    v.owned = true;
    OpKernelContext::Params params;
    std::unique_ptr<OpKernelContext> ctx;
    const TensorValue out = RunOn(kernel.get(), v, &ctx, &params);
    ASSERT_NE(out.tensor, nullptr);
    EXPECT_FALSE(out.is_ref());
    // The same buffer, held by the output alone: no copy, no second count.
    EXPECT_EQ(out.tensor->raw_data(), data);
    EXPECT_TRUE(out.tensor->RefCountIsOne());
    EXPECT_FALSE(in.IsInitialized());
    test::ExpectTensorEqual(test::AsTensor<float>({1, 2, 3}, {3}), *out.tensor);
  }
}

TEST(ForwardInputTest, AnInputNotOwnedIsSharedAndLeftIntact) {
  std::unique_ptr<OpKernel> kernel = MakeKernel("Identity");
  ASSERT_NE(kernel, nullptr);
  Tensor in = test::AsTensor<float>({4, 5}, {2});
  OpKernelContext::Params params;
  std::unique_ptr<OpKernelContext> ctx;
  const TensorValue out = RunOn(kernel.get(), TensorValue(&in), &ctx, &params);
  ASSERT_NE(out.tensor, nullptr);
  EXPECT_EQ(out.tensor->raw_data(), in.raw_data());
  EXPECT_FALSE(in.RefCountIsOne());
  test::ExpectTensorEqual(test::AsTensor<float>({4, 5}, {2}), in);
  test::ExpectTensorEqual(in, *out.tensor);
}

TEST(ForwardInputTest, ARefInputStaysAReference) {
  std::unique_ptr<OpKernel> kernel = MakeKernel("RefEnter");
  ASSERT_NE(kernel, nullptr);
  Tensor var = test::AsTensor<float>({7}, {1});
  absl::Mutex mu;
  TensorValue v(&mu, &var);
  v.owned = true;  // Ignored for a reference: the variable is never moved.
  OpKernelContext::Params params;
  std::unique_ptr<OpKernelContext> ctx;
  const TensorValue out = RunOn(kernel.get(), v, &ctx, &params);
  EXPECT_TRUE(out.is_ref());
  EXPECT_EQ(out.tensor, &var);
  EXPECT_EQ(out.mutex_if_ref, &mu);
  EXPECT_TRUE(var.IsInitialized());
}

}  // namespace
}  // namespace distflow
