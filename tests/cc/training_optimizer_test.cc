// Variables and optimizers run in a DirectSession: Variable reads and
// assignments, gradient descent, momentum (plain and Nesterov) and Adam
// against hand-computed updates, the global step, gradients of variables the
// loss does not use, learning rates that decay with the global step
// (PolynomialDecay, CosineDecay), and a linear regression that converges.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "distflow/cc/ops/standard_ops.h"
#include "distflow/training/adam.h"
#include "distflow/training/gradient_descent.h"
#include "distflow/training/learning_rate.h"
#include "distflow/training/momentum.h"
#include "distflow/training/variable.h"
#include "distflow/common_runtime/session.h"
#include "distflow/gradients/gradients.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A session over the scope's graph as built so far.
class Runner {
 public:
  explicit Runner(const Scope& scope) {
    GraphDef graph;
    absl::Status s = scope.ToGraphDef(&graph);
    EXPECT_TRUE(s.ok()) << s;
    auto session = NewSession(SessionOptions());
    EXPECT_TRUE(session.ok()) << session.status();
    session_ = std::move(*session);
    s = session_->Create(graph);
    EXPECT_TRUE(s.ok()) << s;
  }

  void Target(const std::vector<Operation>& targets,
              const std::vector<std::pair<std::string, Tensor>>& feeds = {}) {
    std::vector<std::string> names;
    for (const Operation& op : targets) names.push_back(op.node()->name());
    std::vector<Tensor> out;
    absl::Status s = session_->Run(feeds, {}, names, &out);
    ASSERT_TRUE(s.ok()) << s;
  }

  std::vector<double> Fetch(const Output& o) {
    std::vector<Tensor> out;
    absl::Status s = session_->Run({}, {o.name()}, {}, &out);
    EXPECT_TRUE(s.ok()) << s;
    std::vector<double> values;
    if (!s.ok()) return values;
    const Tensor& t = out[0];
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      switch (t.dtype()) {
        case DT_FLOAT:
          values.push_back(t.flat<float>()[i]);
          break;
        case DT_DOUBLE:
          values.push_back(t.flat<double>()[i]);
          break;
        case DT_INT64:
          values.push_back(t.flat<int64_t>()[i]);
          break;
        default:
          ADD_FAILURE() << "unexpected dtype";
          break;
      }
    }
    return values;
  }

 private:
  std::unique_ptr<Session> session_;
};

TEST(VariableTest, InitializeReadAssign) {
  Scope scope = Scope::NewRootScope();
  Variable v(scope.WithOpName("v"), {1.0, 2.0});
  auto read = v.Read(scope);
  auto assign = v.Assign(scope, {5.0, 6.0});
  auto add = v.AssignAdd(scope, {0.5, 0.25});
  ASSERT_TRUE(scope.ok()) << scope.status();
  EXPECT_EQ(v.name(), "v");
  EXPECT_EQ(v.dtype(), DT_DOUBLE);
  EXPECT_EQ(v.shape().DebugString(), "[2]");
  std::string shared_name;
  ASSERT_TRUE(GetNodeAttr(v.handle().node()->attrs(), "shared_name", &shared_name).ok());
  EXPECT_EQ(shared_name, "v");

  Runner run(scope);
  run.Target({v.initializer()});
  EXPECT_THAT(run.Fetch(read), ElementsAre(1, 2));
  run.Target({assign});
  run.Target({add});
  EXPECT_THAT(run.Fetch(read), ElementsAre(5.5, 6.25));
}

// loss = sum(w * x) + b * 2 with constant x: dloss/dw = x, dloss/db = 2.
struct LinearModel {
  explicit LinearModel(const Scope& scope)
      : w(scope.WithOpName("w"), {1.0, 2.0}),
        b(scope.WithOpName("b"), 0.5),
        step(CreateGlobalStep(scope)) {
    loss = ops::AddV2(scope, ops::Sum(scope, ops::Mul(scope, w.Read(scope), {3.0, 4.0}), 0),
                      ops::Mul(scope, b.Read(scope), 2.0));
    w_value = w.Read(scope);
    b_value = b.Read(scope);
    step_value = step.Read(scope);
  }
  std::vector<Operation> initializers() const {
    return {w.initializer(), b.initializer(), step.initializer()};
  }

  Variable w, b, step;
  Output loss, w_value, b_value, step_value;
};

TEST(OptimizerTest, GradientDescentMatchesHandComputedSteps) {
  Scope scope = Scope::NewRootScope();
  LinearModel m(scope);
  GradientDescentOptimizer opt(scope, 0.1);
  auto train = opt.Minimize(m.loss, {m.w, m.b}, &m.step);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_TRUE(opt.initializers().empty());

  Runner run(scope);
  run.Target(m.initializers());
  run.Target({*train});
  EXPECT_THAT(run.Fetch(m.w_value), ElementsAre(DoubleNear(0.7, 1e-12), DoubleNear(1.6, 1e-12)));
  EXPECT_THAT(run.Fetch(m.b_value), ElementsAre(DoubleNear(0.3, 1e-12)));
  run.Target({*train});
  EXPECT_THAT(run.Fetch(m.w_value), ElementsAre(DoubleNear(0.4, 1e-12), DoubleNear(1.2, 1e-12)));
  EXPECT_THAT(run.Fetch(m.b_value), ElementsAre(DoubleNear(0.1, 1e-12)));
  EXPECT_THAT(run.Fetch(m.step_value), ElementsAre(2));
}

TEST(OptimizerTest, MomentumMatchesHandComputedSteps) {
  for (bool nesterov : {false, true}) {
    SCOPED_TRACE(nesterov ? "nesterov" : "plain");
    Scope scope = Scope::NewRootScope();
    LinearModel m(scope);
    MomentumOptimizer opt(scope, 0.1, 0.9, nesterov);
    auto train = opt.Minimize(m.loss, {m.w, m.b}, &m.step);
    ASSERT_TRUE(train.ok()) << train.status();
    EXPECT_EQ(opt.initializers().size(), 2u);

    Runner run(scope);
    run.Target(m.initializers());
    run.Target(opt.initializers());
    // accum = 0.9 accum + g; plain: w -= 0.1 accum; Nesterov:
    // w -= 0.1 g + 0.1 * 0.9 accum.
    std::vector<double> w = {1, 2}, accum = {0, 0};
    const std::vector<double> g = {3, 4};
    for (int step = 0; step < 3; ++step) {
      run.Target({*train});
      for (int i = 0; i < 2; ++i) {
        accum[i] = 0.9 * accum[i] + g[i];
        w[i] -= nesterov ? 0.1 * g[i] + 0.1 * 0.9 * accum[i] : 0.1 * accum[i];
      }
      EXPECT_THAT(run.Fetch(m.w_value),
                  ElementsAre(DoubleNear(w[0], 1e-12), DoubleNear(w[1], 1e-12)));
    }
    EXPECT_THAT(run.Fetch(m.step_value), ElementsAre(3));
  }
}

TEST(OptimizerTest, AdamMatchesHandComputedSteps) {
  Scope scope = Scope::NewRootScope();
  LinearModel m(scope);
  AdamOptimizer opt(scope, 0.01, 0.9, 0.999, 1e-8);
  auto train = opt.Minimize(m.loss, {m.w, m.b}, &m.step);
  ASSERT_TRUE(train.ok()) << train.status();
  // m and v per variable, and the two beta powers.
  EXPECT_EQ(opt.initializers().size(), 6u);

  Runner run(scope);
  run.Target(m.initializers());
  run.Target(opt.initializers());
  std::vector<double> w = {1, 2}, mom = {0, 0}, vel = {0, 0};
  const std::vector<double> g = {3, 4};
  double b1_power = 0.9, b2_power = 0.999;
  for (int step = 0; step < 4; ++step) {
    run.Target({*train});
    const double lr_t = 0.01 * std::sqrt(1 - b2_power) / (1 - b1_power);
    for (int i = 0; i < 2; ++i) {
      mom[i] = 0.9 * mom[i] + 0.1 * g[i];
      vel[i] = 0.999 * vel[i] + 0.001 * g[i] * g[i];
      w[i] -= lr_t * mom[i] / (std::sqrt(vel[i]) + 1e-8);
    }
    b1_power *= 0.9;
    b2_power *= 0.999;
    EXPECT_THAT(run.Fetch(m.w_value), ElementsAre(DoubleNear(w[0], 1e-12), DoubleNear(w[1], 1e-12)))
        << "step " << step;
  }
  EXPECT_THAT(run.Fetch(m.step_value), ElementsAre(4));
}

TEST(LearningRateTest, PolynomialDecayFollowsTheGlobalStep) {
  Scope scope = Scope::NewRootScope();
  auto step = ops::Placeholder(scope.WithOpName("step"), DT_INT64);
  const Output linear = PolynomialDecay(scope, step, 0.1, 4, 0.0);
  const Output squared = PolynomialDecay(scope, step, 1.0, 10, 0.5, 2.0);
  ASSERT_TRUE(scope.status().ok()) << scope.status();
  EXPECT_EQ(linear.type(), DT_FLOAT);
  GraphDef graph;
  ASSERT_TRUE(scope.ToGraphDef(&graph).ok());
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(graph).ok());
  // (initial - end) * (1 - min(step, decay) / decay)^power + end.
  const std::vector<std::pair<int64_t, std::pair<double, double>>> expected = {
      {0, {0.1, 1.0}},  {1, {0.075, 0.905}}, {2, {0.05, 0.82}},
      {4, {0.0, 0.68}}, {10, {0.0, 0.5}},    {25, {0.0, 0.5}}};
  for (const auto& [at, rates] : expected) {
    Tensor t(DT_INT64, TensorShape());
    t.scalar<int64_t>() = at;
    std::vector<Tensor> out;
    absl::Status s = (*session)->Run({{"step:0", t}}, {linear.name(), squared.name()}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_NEAR(out[0].scalar<float>(), rates.first, 1e-7) << "step " << at;
    EXPECT_NEAR(out[1].scalar<float>(), rates.second, 1e-6) << "step " << at;
  }
}

TEST(LearningRateTest, PolynomialDecayRejectsBadArguments) {
  const auto error = [](int64_t decay_steps, double initial, double end, double power) {
    Scope scope = Scope::NewRootScope();
    auto step = ops::Placeholder(scope.WithOpName("step"), DT_INT64);
    PolynomialDecay(scope, step, initial, decay_steps, end, power);
    EXPECT_EQ(scope.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(scope.status().message());
  };
  EXPECT_THAT(error(0, 0.1, 0, 1), HasSubstr("PolynomialDecay needs decay_steps > 0, got 0"));
  EXPECT_THAT(error(10, -1, 0, 1), HasSubstr("finite rate >= 0, got initial -1"));
  EXPECT_THAT(error(10, 0.1, std::nan(""), 1), HasSubstr("finite end rate >= 0, got nan"));
  EXPECT_THAT(error(10, 0.1, 0, 0), HasSubstr("power > 0, got 0"));
}

TEST(LearningRateTest, CosineDecayFollowsHalfACosine) {
  Scope scope = Scope::NewRootScope();
  auto step = ops::Placeholder(scope.WithOpName("step"), DT_INT64);
  const Output to_zero = CosineDecay(scope, step, 0.1, 4);
  const Output to_alpha = CosineDecay(scope, step, 1.0, 4, 0.2);
  ASSERT_TRUE(scope.status().ok()) << scope.status();
  GraphDef graph;
  ASSERT_TRUE(scope.ToGraphDef(&graph).ok());
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(graph).ok());
  // initial * ((1 - alpha) * (1 + cos(pi * min(step, 4) / 4)) / 2 + alpha).
  const double half_sqrt2 = std::sqrt(0.5);
  const std::vector<std::pair<int64_t, std::pair<double, double>>> expected = {
      {0, {0.1, 1.0}},
      {1, {0.05 * (1 + half_sqrt2), 0.8 * 0.5 * (1 + half_sqrt2) + 0.2}},
      {2, {0.05, 0.6}},
      {4, {0.0, 0.2}},
      {9, {0.0, 0.2}}};
  for (const auto& [at, rates] : expected) {
    Tensor t(DT_INT64, TensorShape());
    t.scalar<int64_t>() = at;
    std::vector<Tensor> out;
    absl::Status s = (*session)->Run({{"step:0", t}}, {to_zero.name(), to_alpha.name()}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_NEAR(out[0].scalar<float>(), rates.first, 1e-7) << "step " << at;
    EXPECT_NEAR(out[1].scalar<float>(), rates.second, 1e-6) << "step " << at;
  }

  for (double alpha : {-0.1, 1.5}) {
    Scope bad = Scope::NewRootScope();
    CosineDecay(bad, ops::Placeholder(bad, DT_INT64), 0.1, 4, alpha);
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr("alpha in [0, 1]"));
  }
  Scope no_steps = Scope::NewRootScope();
  CosineDecay(no_steps, ops::Placeholder(no_steps, DT_INT64), 0.1, -3);
  EXPECT_THAT(std::string(no_steps.status().message()),
              HasSubstr("CosineDecay needs decay_steps > 0, got -3"));
}

TEST(OptimizerTest, LearningRateCanBeATensorOfTheGlobalStep) {
  // Gradient descent at 0.1 falling to 0 over 4 steps: each step reads the
  // global step before its update increments it.
  Scope scope = Scope::NewRootScope();
  LinearModel m(scope);
  GradientDescentOptimizer opt(scope, PolynomialDecay(scope, m.step.Read(scope), 0.1, 4, 0.0));
  auto train = opt.Minimize(m.loss, {m.w, m.b}, &m.step);
  ASSERT_TRUE(train.ok()) << train.status();

  Runner run(scope);
  run.Target(m.initializers());
  std::vector<double> w = {1, 2};
  const std::vector<double> g = {3, 4};
  for (int step = 0; step < 6; ++step) {
    run.Target({*train});
    const double lr = 0.1 * (1 - std::min(step, 4) / 4.0);
    for (int i = 0; i < 2; ++i) w[i] -= lr * g[i];
    EXPECT_THAT(run.Fetch(m.w_value), ElementsAre(DoubleNear(w[0], 1e-6), DoubleNear(w[1], 1e-6)))
        << "step " << step;
  }
  EXPECT_THAT(run.Fetch(m.step_value), ElementsAre(6));
}

TEST(OptimizerTest, VariableTheLossDoesNotUseGetsNoGradient) {
  Scope scope = Scope::NewRootScope();
  LinearModel m(scope);
  Variable unused(scope.WithOpName("unused"), 1.f);
  GradientDescentOptimizer opt(scope, 0.1);
  auto grads = opt.ComputeGradients(m.loss, {m.w, unused});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_NE((*grads)[0].gradient.node(), nullptr);
  EXPECT_EQ((*grads)[1].gradient.node(), nullptr);

  auto none = opt.ApplyGradients({(*grads)[1]});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(none.status().message()),
              HasSubstr("no gradients provided for any variable: [unused]"));
}

TEST(OptimizerTest, LinearRegressionConverges) {
  // y = 3 x - 2 on eight points, float, fed through placeholders.
  Scope scope = Scope::NewRootScope();
  auto x = ops::Placeholder(scope.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({-1, 1}));
  auto y = ops::Placeholder(scope.WithOpName("y"), DT_FLOAT, ops::Placeholder::Shape({-1, 1}));
  Variable w(scope.WithOpName("w"), {{0.f}});
  Variable b(scope.WithOpName("b"), {0.f});
  auto prediction = ops::BiasAdd(scope, ops::MatMul(scope, x, w.Read(scope)), b.Read(scope));
  auto loss = ops::Mean(scope, ops::SquaredDifference(scope, prediction, y), {0, 1});
  GradientDescentOptimizer opt(scope, 0.1);
  auto train = opt.Minimize(loss, {w, b});
  ASSERT_TRUE(train.ok()) << train.status();
  auto w_value = w.Read(scope);
  auto b_value = b.Read(scope);

  Tensor xs(DT_FLOAT, TensorShape({8, 1})), ys(DT_FLOAT, TensorShape({8, 1}));
  for (int i = 0; i < 8; ++i) {
    xs.flat<float>()[i] = -1 + i * 0.3f;
    ys.flat<float>()[i] = 3 * xs.flat<float>()[i] - 2;
  }
  Runner run(scope);
  run.Target({w.initializer(), b.initializer()});
  for (int step = 0; step < 300; ++step) {
    run.Target({*train}, {{"x:0", xs}, {"y:0", ys}});
  }
  EXPECT_THAT(run.Fetch(w_value), ElementsAre(DoubleNear(3, 1e-3)));
  EXPECT_THAT(run.Fetch(b_value), ElementsAre(DoubleNear(-2, 1e-3)));
}

}  // namespace
}  // namespace distflow
