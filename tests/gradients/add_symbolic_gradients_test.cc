// AddSymbolicGradients: fan-out summing, grad_ys, several outputs, inputs no
// gradient reaches, non-differentiable paths, the "no gradient" error and
// argument validation.
#include <string>
#include <vector>

#include "distflow/cc/op_builder.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/common_runtime/session.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "distflow/gradients/gradients.h"
#include "gmock/gmock.h"
#include "grad_test_util.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

REGISTER_OP("GradTestNoGradient").Input("x: float").Output("y: float").SetShapeFn(UnchangedShape);

// Runs `fetches` in a fresh session over the scope's graph and returns the
// values of each as doubles.
std::vector<std::vector<double>> Eval(
    const Scope& scope, const OutputList& fetches,
    const std::vector<std::pair<std::string, Tensor>>& feeds = {}) {
  GraphDef graph;
  EXPECT_TRUE(scope.ToGraphDef(&graph).ok()) << scope.status();
  auto session = NewSession(SessionOptions());
  EXPECT_TRUE(session.ok());
  EXPECT_TRUE((*session)->Create(graph).ok());
  std::vector<std::string> names;
  for (const Output& f : fetches) names.push_back(f.name());
  std::vector<Tensor> out;
  absl::Status s = (*session)->Run(feeds, names, {}, &out);
  EXPECT_TRUE(s.ok()) << s;
  std::vector<std::vector<double>> values;
  for (const Tensor& t : out) {
    std::vector<double> v;
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      v.push_back(t.dtype() == DT_FLOAT ? t.flat<float>()[i] : t.flat<double>()[i]);
    }
    values.push_back(v);
  }
  return values;
}

TEST(AddSymbolicGradientsTest, FanOutIsSummed) {
  // y = x * x + x: dy/dx = 2x + 1.
  Scope scope = Scope::NewRootScope();
  auto x = ops::Const(scope, {1.f, 2.f, -3.f});
  auto y = ops::AddV2(scope, ops::Mul(scope, x, x), x);
  OutputList grads;
  ASSERT_TRUE(AddSymbolicGradients(scope, {y}, {x}, &grads).ok());
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_THAT(Eval(scope, grads)[0], ElementsAre(3, 5, -5));
  // Two consumers of x (Mul uses it twice, AddV2 once) are summed by AddN.
  int add_n = 0;
  for (Node* n : scope.graph()->op_nodes()) add_n += n->type_string() == "AddN";
  EXPECT_EQ(add_n, 1);
}

TEST(AddSymbolicGradientsTest, GradYsScaleTheGradient) {
  Scope scope = Scope::NewRootScope();
  auto x = ops::Const(scope, {1.0, 2.0});
  auto y = ops::Square(scope, x);
  auto dy = ops::Const(scope, {10.0, -1.0});
  OutputList grads;
  ASSERT_TRUE(AddSymbolicGradients(scope, {y}, {x}, {dy}, &grads).ok());
  EXPECT_THAT(Eval(scope, grads)[0], ElementsAre(20, -4));
}

TEST(AddSymbolicGradientsTest, SeveralOutputsAndInputs) {
  // y1 = a * b, y2 = a + y1: d/da = b + 1 + b, d/db = a + a.
  Scope scope = Scope::NewRootScope();
  auto a = ops::Const(scope, 3.0);
  auto b = ops::Const(scope, 5.0);
  auto y1 = ops::Mul(scope, a, b);
  auto y2 = ops::AddV2(scope, a, y1);
  OutputList grads;
  ASSERT_TRUE(AddSymbolicGradients(scope, {y1, y2}, {a, b}, &grads).ok());
  auto values = Eval(scope, grads);
  EXPECT_THAT(values[0], ElementsAre(11));
  EXPECT_THAT(values[1], ElementsAre(6));
}

TEST(AddSymbolicGradientsTest, GradientWithRespectToIntermediateTensor) {
  // x -> h = 2x -> y = h^2; dy/dh = 2h and dy/dx = 8x, in one call.
  Scope scope = Scope::NewRootScope();
  auto x = ops::Const(scope, 1.5);
  auto h = ops::Mul(scope, x, 2.0);
  auto y = ops::Square(scope, h);
  OutputList grads;
  ASSERT_TRUE(AddSymbolicGradients(scope, {y}, {h, x}, &grads).ok());
  auto values = Eval(scope, grads);
  EXPECT_THAT(values[0], ElementsAre(6));
  EXPECT_THAT(values[1], ElementsAre(12));
}

TEST(AddSymbolicGradientsTest, UnreachableInputGetsZeros) {
  Scope scope = Scope::NewRootScope();
  auto x = ops::Const(scope, {1.f, 2.f});
  auto unused = ops::Const(scope, {{1.f, 2.f, 3.f}});
  auto y = ops::Exp(scope, x);
  OutputList grads;
  ASSERT_TRUE(AddSymbolicGradients(scope, {y}, {unused}, &grads).ok());
  EXPECT_EQ(grads[0].node()->type_string(), "ZerosLike");
  EXPECT_THAT(Eval(scope, grads)[0], ElementsAre(0, 0, 0));
}

TEST(AddSymbolicGradientsTest, StopGradientAndIntegerPathsGiveNoGradient) {
  Scope scope = Scope::NewRootScope();
  auto x = ops::Placeholder(scope, DT_FLOAT, ops::Placeholder::Shape({2, 2}));
  // Only through StopGradient: zero. Through Shape (an int tensor) into
  // Reshape: no error, and only the data path counts.
  auto stopped = ops::Mul(scope, ops::StopGradient(scope, x), 3.f);
  auto reshaped = ops::Reshape(scope, x, ops::Shape(scope, x));
  OutputList grads;
  ASSERT_TRUE(AddSymbolicGradients(scope, {stopped}, {x}, &grads).ok());
  OutputList grads2;
  ASSERT_TRUE(AddSymbolicGradients(scope, {reshaped}, {x}, &grads2).ok());
  Tensor xv(DT_FLOAT, TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i) xv.flat<float>()[i] = i;
  auto values = Eval(scope, {grads[0], grads2[0]}, {{"Placeholder:0", xv}});
  EXPECT_THAT(values[0], ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(values[1], ElementsAre(1, 1, 1, 1));
}

TEST(AddSymbolicGradientsTest, RefVariableIsAnInput) {
  // A TensorFlow 1 ref variable: the gradient is taken with respect to its
  // ref output, which feeds Square as a plain float.
  Scope scope = Scope::NewRootScope();
  Node* v = ops::internal::BuildOp(scope.WithOpName("v"), "VariableV2", {},
                                   {{"shape", PartialTensorShape({2})}, {"dtype", DT_FLOAT}});
  ASSERT_NE(v, nullptr) << scope.status();
  const Input ref(Output(v, 0));
  const Input init(Input::Initializer({1.5f, -2.f}));
  Node* assign = ops::internal::BuildOp(scope, "Assign", {ref, init});
  ASSERT_NE(assign, nullptr) << scope.status();
  auto y = ops::Square(scope, Output(v, 0));
  OutputList grads;
  absl::Status built = AddSymbolicGradients(scope, {y}, {Output(v, 0)}, &grads);
  ASSERT_TRUE(built.ok()) << built;

  GraphDef graph;
  ASSERT_TRUE(scope.ToGraphDef(&graph).ok());
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE((*session)->Create(graph).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, {assign->name()}, &out).ok());
  absl::Status s = (*session)->Run({}, {grads[0].name()}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(std::vector<float>(out[0].flat<float>().begin(), out[0].flat<float>().end()),
              ElementsAre(3, -4));
}

TEST(AddSymbolicGradientsTest, OpWithoutGradientIsAnErrorNamingOpAndNode) {
  Scope scope = Scope::NewRootScope();
  auto x = ops::Const(scope, {1.f});
  const Input in(x);
  Node* node = ops::internal::BuildOp(scope.WithOpName("blocker"), "GradTestNoGradient", {in});
  ASSERT_NE(node, nullptr) << scope.status();
  auto y = ops::Square(scope, Output(node));
  OutputList grads;
  absl::Status s = AddSymbolicGradients(scope, {y}, {x}, &grads);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("No gradient defined for op: "
                                                  "GradTestNoGradient (node 'blocker')"));
}

TEST(AddSymbolicGradientsTest, OpWithoutGradientOffThePathIsFine) {
  // The op feeds y but does not lie between x and y.
  Scope scope = Scope::NewRootScope();
  auto x = ops::Const(scope, {2.f});
  auto c = ops::Const(scope, {1.f});
  const Input in(c);
  Node* node = ops::internal::BuildOp(scope, "GradTestNoGradient", {in});
  ASSERT_NE(node, nullptr) << scope.status();
  auto y = ops::Mul(scope, x, Output(node));
  OutputList grads;
  ASSERT_TRUE(AddSymbolicGradients(scope, {y}, {x}, &grads).ok());
}

TEST(AddSymbolicGradientsTest, BadArgumentsAreInvalidArgument) {
  Scope scope = Scope::NewRootScope();
  auto x = ops::Const(scope, {1.f});
  auto y = ops::Square(scope, x);
  OutputList grads;
  absl::Status s = AddSymbolicGradients(scope, {y}, {Output()}, &grads);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("input 0 is null"));
  s = AddSymbolicGradients(scope, {y}, {x}, {}, &grads);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("1 outputs but 0 grad_inputs"));
  s = AddSymbolicGradients(scope, {y}, {x}, {ops::Const(scope, {1.0})}, &grads);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("has dtype float64 but output"));
}

}  // namespace
}  // namespace distflow
