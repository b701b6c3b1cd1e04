#include "grad_test_util.h"

#include <algorithm>
#include <random>
#include <string>

#include "distflow/cc/ops/array_ops.h"
#include "distflow/common_runtime/session.h"
#include "distflow/gradients/gradient_checker.h"
#include "gtest/gtest.h"

namespace distflow {
namespace test {
namespace {

std::mt19937_64& Rng() {
  static std::mt19937_64 rng(20240611);
  return rng;
}

}  // namespace

GradInput Rand(const TensorShape& shape, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  GradInput in{shape, {}};
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    in.values.push_back(dist(Rng()));
  }
  return in;
}

GradInput Spread(const TensorShape& shape, double lo, double hi) {
  const int64_t n = shape.num_elements();
  GradInput in{shape, {}};
  for (int64_t i = 0; i < n; ++i) {
    in.values.push_back(lo + (hi - lo) * (i + 0.5) / n);
  }
  std::shuffle(in.values.begin(), in.values.end(), Rng());
  return in;
}

GradInput Values(const TensorShape& shape, std::vector<double> values) {
  return GradInput{shape, std::move(values)};
}

GradInput Unknown(GradInput in) {
  in.unknown_shape = true;
  return in;
}

Tensor MakeTensor(DataType dtype, const TensorShape& shape, const std::vector<double>& values) {
  Tensor t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DT_FLOAT) {
      t.flat<float>()[i] = static_cast<float>(values[i]);
    } else {
      t.flat<double>()[i] = values[i];
    }
  }
  return t;
}

void ExpectGradientsMatch(const GradFunction& fn, const std::vector<GradInput>& inputs) {
  for (DataType dtype : {DT_DOUBLE, DT_FLOAT}) {
    SCOPED_TRACE(DataTypeString(dtype));
    Scope scope = Scope::NewRootScope();
    OutputList xs;
    std::vector<Tensor> values;
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const PartialTensorShape declared = inputs[i].unknown_shape
                                              ? PartialTensorShape::Unknown()
                                              : PartialTensorShape(inputs[i].shape);
      xs.push_back(
          ops::Placeholder(scope.WithOpName("x", i), dtype, ops::Placeholder::Shape(declared)));
      values.push_back(MakeTensor(dtype, inputs[i].shape, inputs[i].values));
      feeds.emplace_back(xs.back().name(), values.back());
    }
    const OutputList ys = fn(scope, xs);
    ASSERT_TRUE(scope.ok()) << scope.status();

    // The ys' shapes, from one forward run.
    GraphDef graph;
    ASSERT_TRUE(scope.ToGraphDef(&graph).ok());
    auto session = NewSession(SessionOptions());
    ASSERT_TRUE(session.ok()) << session.status();
    ASSERT_TRUE((*session)->Create(graph).ok());
    std::vector<std::string> names;
    for (const Output& y : ys) names.push_back(y.name());
    std::vector<Tensor> forward;
    absl::Status run = (*session)->Run(feeds, names, {}, &forward);
    ASSERT_TRUE(run.ok()) << run;
    std::vector<TensorShape> y_shapes;
    for (const Tensor& t : forward) y_shapes.push_back(t.shape());

    double max_error = -1;
    absl::Status s = ComputeGradientError(scope, xs, values, ys, y_shapes, &max_error);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_LT(max_error, dtype == DT_DOUBLE ? 1e-4 : 1e-2);
  }
}

}  // namespace test
}  // namespace distflow
