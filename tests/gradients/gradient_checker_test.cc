// The gradient checker itself: it reports a wrong gradient, handles several
// xs and ys, and rejects bad arguments.
#include "distflow/gradients/gradient_checker.h"

#include <vector>

#include "distflow/cc/op_builder.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "distflow/gradients/grad_op_registry.h"
#include "distflow/gradients/gradients.h"
#include "gmock/gmock.h"
#include "grad_test_util.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

// y = 2x, with a gradient that claims 3 dy.
REGISTER_OP("GradTestDouble").Input("x: double").Output("y: double").SetShapeFn(UnchangedShape);

class GradTestDoubleOp : public OpKernel {
 public:
  explicit GradTestDoubleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      y->flat<double>()[i] = 2 * x.flat<double>()[i];
    }
  }
};
REGISTER_KERNEL_BUILDER(Name("GradTestDouble").Device(kDeviceCpu), GradTestDoubleOp);

absl::Status WrongGrad(const Scope& scope, const Operation& /*op*/,
                       const std::vector<Output>& grad_inputs, std::vector<Output>* grad_outputs) {
  grad_outputs->push_back(ops::Mul(scope, grad_inputs[0], 3.0));
  return scope.status();
}
REGISTER_GRADIENT_OP("GradTestDouble", WrongGrad);

TEST(GradientCheckerTest, ReportsAWrongGradient) {
  Scope scope = Scope::NewRootScope();
  auto x = ops::Placeholder(scope, DT_DOUBLE, ops::Placeholder::Shape({3}));
  const Input in(x);
  Node* node = ops::internal::BuildOp(scope, "GradTestDouble", {in});
  ASSERT_NE(node, nullptr) << scope.status();
  double max_error = -1;
  ASSERT_TRUE(ComputeGradientError(scope, {x}, {TensorShape({3})}, {Output(node)},
                                   {TensorShape({3})}, &max_error)
                  .ok());
  EXPECT_NEAR(max_error, 1.0, 1e-6);
}

TEST(GradientCheckerTest, SeveralXsAndYs) {
  // y0 = x0 * x1 (broadcast), y1 = sum(x1^2).
  Scope scope = Scope::NewRootScope();
  auto x0 = ops::Placeholder(scope, DT_DOUBLE, ops::Placeholder::Shape({2, 3}));
  auto x1 = ops::Placeholder(scope, DT_DOUBLE, ops::Placeholder::Shape({3}));
  auto y0 = ops::Mul(scope, x0, x1);
  auto y1 = ops::Sum(scope, ops::Square(scope, x1), 0);
  double max_error = -1;
  ASSERT_TRUE(ComputeGradientError(scope, {x0, x1}, {TensorShape({2, 3}), TensorShape({3})},
                                   {y0, y1}, {TensorShape({2, 3}), TensorShape()}, &max_error)
                  .ok());
  EXPECT_LT(max_error, 1e-8);
}

TEST(GradientCheckerTest, RejectsBadArguments) {
  Scope scope = Scope::NewRootScope();
  auto x = ops::Placeholder(scope, DT_INT32, ops::Placeholder::Shape({2}));
  auto f = ops::Placeholder(scope, DT_FLOAT, ops::Placeholder::Shape({2}));
  double max_error;
  absl::Status s =
      ComputeGradientError(scope, {x}, {TensorShape({2})}, {x}, {TensorShape({2})}, &max_error);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("x 0 must be a float or double tensor"));
  s = ComputeGradientError(scope, f, test::MakeTensor(DT_DOUBLE, {2}, {1, 2}), f, {2}, &max_error);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("value 0 has dtype float64"));
  s = ComputeGradientError(scope, {f}, {}, {f}, {TensorShape({2})}, &max_error);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace distflow
