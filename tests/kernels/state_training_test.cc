// Optimizer update kernels, in both forms (ref variables: ApplyX; resource
// variables: ResourceApplyX), checked for three steps against values worked
// out by hand from TensorFlow's formulas; plus their shape and
// initialization errors.
#include <string>
#include <vector>

#include "state_test_util.h"

namespace distflow {
namespace {

using test::AsTensor;
using test::ExpectError;
using test::ExpectTensorNear;
using test::KernelInput;
using test::StateKernelRunner;

// Runs each test on ref variables (false) and on resource variables (true).
class TrainingTest : public ::testing::TestWithParam<bool> {
 public:
  bool resource() const { return GetParam(); }
  std::string Op(const std::string& base) const { return resource() ? "Resource" + base : base; }

  // A variable `name` holding `init`, as the update ops take it.
  KernelInput Var(const std::string& name, const Tensor& init) {
    if (resource()) {
      Tensor h = r_.RunOne("VarHandleOp", {},
                           {{"dtype", init.dtype()},
                            {"shape", PartialTensorShape(init.shape())},
                            {"shared_name", name}},
                           name);
      r_.RunOk("AssignVariableOp", {h, init}, {{"dtype", init.dtype()}});
      return h;
    }
    auto v =
        r_.RunToEnd("VariableV2", {},
                    {{"dtype", init.dtype()}, {"shape", PartialTensorShape(init.shape())}}, name);
    EXPECT_TRUE(v->status().ok()) << v->status();
    r_.RunOk("Assign", {v->ref_output(0), init}, {{"T", init.dtype()}});
    return v->ref_output(0);
  }

  // The current value of a variable made by Var.
  Tensor Value(const KernelInput& var, DataType dtype) {
    if (resource()) return r_.RunOne("ReadVariableOp", {var}, {{"dtype", dtype}});
    absl::ReaderMutexLock l(var.mu);
    return *var.ref;
  }

  absl::Status Apply(const std::string& base, const std::vector<KernelInput>& inputs,
                     std::vector<test::KernelAttr> attrs) {
    return r_.Run(Op(base), inputs, attrs).status();
  }

  StateKernelRunner r_;
};

TEST_P(TrainingTest, GradientDescent) {
  KernelInput w = Var("w", AsTensor<float>({1, 2}));
  const std::vector<std::vector<float>> expected = {{0.5f, 3}, {0, 4}, {-0.5f, 5}};
  for (const auto& want : expected) {
    ASSERT_TRUE(Apply("ApplyGradientDescent",
                      {w, Tensor::Scalar<float>(0.5f), AsTensor<float>({1, -2})}, {{"T", DT_FLOAT}})
                    .ok());
    ExpectTensorNear(AsTensor<float>(want), Value(w, DT_FLOAT));
  }
}

TEST_P(TrainingTest, Momentum) {
  KernelInput w = Var("w", AsTensor<double>({1, 2}));
  KernelInput accum = Var("accum", AsTensor<double>({0, 0}));
  // accum = accum * 0.9 + g; w -= 0.1 * accum.
  const std::vector<std::vector<double>> w_want = {{0.9, 1.95}, {0.71, 1.855}, {0.439, 1.7195}};
  const std::vector<std::vector<double>> accum_want = {{1, 0.5}, {1.9, 0.95}, {2.71, 1.355}};
  for (size_t step = 0; step < 3; ++step) {
    ASSERT_TRUE(Apply("ApplyMomentum",
                      {w, accum, Tensor::Scalar<double>(0.1), AsTensor<double>({1, 0.5}),
                       Tensor::Scalar<double>(0.9)},
                      {{"T", DT_DOUBLE}})
                    .ok());
    ExpectTensorNear(AsTensor<double>(w_want[step]), Value(w, DT_DOUBLE), 1e-12);
    ExpectTensorNear(AsTensor<double>(accum_want[step]), Value(accum, DT_DOUBLE), 1e-12);
  }
}

TEST_P(TrainingTest, MomentumNesterov) {
  KernelInput w = Var("w", AsTensor<double>({1, 2}));
  KernelInput accum = Var("accum", AsTensor<double>({0, 0}));
  // w -= g * lr + accum * momentum * lr, after the accum update.
  const std::vector<std::vector<double>> w_want = {
      {0.81, 1.905}, {0.539, 1.7695}, {0.1951, 1.59755}};
  for (size_t step = 0; step < 3; ++step) {
    ASSERT_TRUE(Apply("ApplyMomentum",
                      {w, accum, Tensor::Scalar<double>(0.1), AsTensor<double>({1, 0.5}),
                       Tensor::Scalar<double>(0.9)},
                      {{"T", DT_DOUBLE}, {"use_nesterov", true}})
                    .ok());
    ExpectTensorNear(AsTensor<double>(w_want[step]), Value(w, DT_DOUBLE), 1e-12);
  }
}

// Adam with lr 0.1, beta1 0.9, beta2 0.999, epsilon 1e-8 and gradient
// [0.5, -1] at every step; beta powers are beta^t.
void RunAdam(TrainingTest* t, bool nesterov, const std::vector<std::vector<double>>& w_want,
             const std::vector<std::vector<double>>& m_want) {
  KernelInput w = t->Var("w", AsTensor<double>({1, 2}));
  KernelInput m = t->Var("m", AsTensor<double>({0, 0}));
  KernelInput v = t->Var("v", AsTensor<double>({0, 0}));
  double b1p = 1, b2p = 1;
  for (size_t step = 0; step < 3; ++step) {
    b1p *= 0.9;
    b2p *= 0.999;
    ASSERT_TRUE(t->Apply("ApplyAdam",
                         {w, m, v, Tensor::Scalar<double>(b1p), Tensor::Scalar<double>(b2p),
                          Tensor::Scalar<double>(0.1), Tensor::Scalar<double>(0.9),
                          Tensor::Scalar<double>(0.999), Tensor::Scalar<double>(1e-8),
                          AsTensor<double>({0.5, -1})},
                         {{"T", DT_DOUBLE}, {"use_nesterov", nesterov}})
                    .ok());
    ExpectTensorNear(AsTensor<double>(w_want[step]), t->Value(w, DT_DOUBLE), 1e-12);
    ExpectTensorNear(AsTensor<double>(m_want[step]), t->Value(m, DT_DOUBLE), 1e-12);
  }
}

TEST_P(TrainingTest, Adam) {
  RunAdam(this, false,
          {{0.9000000632455132, 2.0999999683772335},
           {0.800000107978038, 2.1999999460109656},
           {0.7000001445111269, 2.299999927744418}},
          {{0.05, -0.1}, {0.095, -0.19}, {0.1355, -0.271}});
}

TEST_P(TrainingTest, AdamNesterov) {
  RunAdam(this, true,
          {{0.8100001201664752, 2.1899999399167434},
           {0.6673686050218132, 2.332631486962751},
           {0.5404682823787478, 2.4595318327861246}},
          {{0.05, -0.1}, {0.095, -0.19}, {0.1355, -0.271}});
}

TEST_P(TrainingTest, ShapeMismatchNamesBothShapes) {
  KernelInput w = Var("w", AsTensor<float>({1, 2}));
  absl::Status s =
      Apply("ApplyGradientDescent", {w, Tensor::Scalar<float>(0.5f), AsTensor<float>({1, 2, 3})},
            {{"T", DT_FLOAT}});
  ExpectError(s, absl::StatusCode::kInvalidArgument, {"[2]", "[3]"});
  s = Apply("ApplyGradientDescent", {w, AsTensor<float>({0.5f}), AsTensor<float>({1, 2})},
            {{"T", DT_FLOAT}});
  ExpectError(s, absl::StatusCode::kInvalidArgument, {"alpha", "scalar"});
  ExpectTensorNear(AsTensor<float>({1, 2}), Value(w, DT_FLOAT));
}

INSTANTIATE_TEST_SUITE_P(RefAndResource, TrainingTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Resource" : "Ref";
                         });

TEST(TrainingErrorsTest, UninitializedResourceVariable) {
  StateKernelRunner r;
  Tensor h = r.RunOne("VarHandleOp", {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({2})}},
                      "bias");
  auto s = r.Run("ResourceApplyGradientDescent",
                 {h, Tensor::Scalar<float>(0.1f), AsTensor<float>({1, 1})}, {{"T", DT_FLOAT}});
  ExpectError(s.status(), absl::StatusCode::kFailedPrecondition, {"'bias'", "uninitialized"});
}

TEST(TrainingErrorsTest, ResourceVariableOfAnotherDtype) {
  StateKernelRunner r;
  Tensor h =
      r.RunOne("VarHandleOp", {}, {{"dtype", DT_DOUBLE}, {"shape", PartialTensorShape({1})}}, "w");
  r.RunOk("AssignVariableOp", {h, AsTensor<double>({1})}, {{"dtype", DT_DOUBLE}});
  auto s = r.Run("ResourceApplyGradientDescent",
                 {h, Tensor::Scalar<float>(0.1f), AsTensor<float>({1})}, {{"T", DT_FLOAT}});
  ExpectError(s.status(), absl::StatusCode::kInvalidArgument, {"'w'", "float64", "float32"});
}

TEST(TrainingErrorsTest, UninitializedRefVariable) {
  StateKernelRunner r;
  auto v =
      r.RunToEnd("VariableV2", {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({2})}}, "w");
  ASSERT_TRUE(v->status().ok());
  auto s = r.Run("ApplyGradientDescent",
                 {v->ref_output(0), Tensor::Scalar<float>(0.1f), AsTensor<float>({1, 1})},
                 {{"T", DT_FLOAT}});
  ExpectError(s.status(), absl::StatusCode::kFailedPrecondition, {"uninitialized"});
}

}  // namespace
}  // namespace distflow
