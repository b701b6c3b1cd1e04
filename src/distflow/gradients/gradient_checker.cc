#include "distflow/gradients/gradient_checker.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "distflow/cc/ops/array_ops.h"
#include "distflow/common_runtime/session.h"
#include "distflow/core/status.h"
#include "distflow/gradients/gradients.h"

namespace distflow {
namespace {

bool IsCheckedType(DataType t) { return t == DT_FLOAT || t == DT_DOUBLE; }

double Get(const Tensor& t, int64_t i) {
  return t.dtype() == DT_FLOAT ? t.flat<float>()[i] : t.flat<double>()[i];
}

void Set(Tensor* t, int64_t i, double v) {
  if (t->dtype() == DT_FLOAT) {
    t->flat<float>()[i] = static_cast<float>(v);
  } else {
    t->flat<double>()[i] = v;
  }
}

Tensor Zeros(DataType dtype, const TensorShape& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) Set(&t, i, 0);
  return t;
}

// The graph and session both Jacobians are computed in. Every run is fed
// fresh tensors: a fetched value may share its buffer with a fed one (an
// Identity, an empty reduction), so nothing fed is modified afterwards.
class JacobianRunner {
 public:
  JacobianRunner(const OutputList& xs, const std::vector<Tensor>& x_values)
      : xs_(xs), x_values_(x_values) {}

  absl::Status Start(const Scope& scope) {
    GraphDef graph;
    DF_RETURN_IF_ERROR(scope.ToGraphDef(&graph));
    DF_ASSIGN_OR_RETURN(session_, NewSession(SessionOptions()));
    return session_->Create(graph);
  }

  // Runs `fetches` with the xs fed their values, except x `moved` (when
  // not -1) whose element `element` is replaced by `value`, and with
  // `extra` fed too.
  absl::Status Run(const OutputList& fetches, std::vector<std::pair<std::string, Tensor>> extra,
                   std::vector<Tensor>* out, int moved = -1, int64_t element = 0,
                   double value = 0) {
    for (size_t i = 0; i < xs_.size(); ++i) {
      Tensor x = x_values_[i].DeepCopy();
      if (static_cast<int>(i) == moved) Set(&x, element, value);
      extra.emplace_back(xs_[i].name(), std::move(x));
    }
    std::vector<std::string> names;
    for (const Output& f : fetches) names.push_back(f.name());
    return session_->Run(extra, names, {}, out);
  }

 private:
  const OutputList& xs_;
  const std::vector<Tensor>& x_values_;
  std::unique_ptr<Session> session_;
};

}  // namespace

absl::Status ComputeGradientError(const Scope& scope, const OutputList& xs,
                                  const std::vector<Tensor>& x_init_values, const OutputList& ys,
                                  const std::vector<TensorShape>& y_shapes, double* max_error) {
  if (!scope.ok()) return scope.status();
  if (xs.size() != x_init_values.size() || ys.size() != y_shapes.size()) {
    return errors::InvalidArgument("ComputeGradientError got ", xs.size(), " xs with ",
                                   x_init_values.size(), " values and ", ys.size(), " ys with ",
                                   y_shapes.size(), " shapes; the counts must match");
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].node() == nullptr || !IsCheckedType(xs[i].type())) {
      return errors::InvalidArgument("ComputeGradientError x ", i,
                                     " must be a float or double tensor");
    }
    if (x_init_values[i].dtype() != xs[i].type()) {
      return errors::InvalidArgument("ComputeGradientError value ", i, " has dtype ",
                                     DataTypeString(x_init_values[i].dtype()), " but x ",
                                     xs[i].name(), " has dtype ", DataTypeString(xs[i].type()));
    }
  }
  for (size_t i = 0; i < ys.size(); ++i) {
    if (ys[i].node() == nullptr || !IsCheckedType(ys[i].type())) {
      return errors::InvalidArgument("ComputeGradientError y ", i,
                                     " must be a float or double tensor");
    }
  }

  OutputList dys;
  for (size_t i = 0; i < ys.size(); ++i) {
    dys.push_back(ops::Placeholder(scope, ys[i].type(), ops::Placeholder::Shape(y_shapes[i])));
  }
  OutputList dxs;
  DF_RETURN_IF_ERROR(AddSymbolicGradients(scope, ys, xs, dys, &dxs));
  for (size_t i = 0; i < dxs.size(); ++i) {
    if (dxs[i].node() == nullptr) {
      return errors::InvalidArgument("ComputeGradientError: x ", i, " got no gradient tensor");
    }
  }
  JacobianRunner runner(xs, x_init_values);
  DF_RETURN_IF_ERROR(runner.Start(scope));

  int64_t x_size = 0, y_size = 0;
  for (const Tensor& v : x_init_values) x_size += v.NumElements();
  for (const TensorShape& s : y_shapes) y_size += s.num_elements();
  // jacobian[x element][y element], theoretical and numeric.
  std::vector<double> theoretical(x_size * y_size, 0.0);
  std::vector<double> numeric(x_size * y_size, 0.0);

  // Theoretical: column c of dy/dx is dx for dy one-hot at y element c.
  int64_t col = 0;
  for (size_t j = 0; j < ys.size(); ++j) {
    for (int64_t r = 0; r < y_shapes[j].num_elements(); ++r, ++col) {
      std::vector<std::pair<std::string, Tensor>> dy_feeds;
      for (size_t k = 0; k < ys.size(); ++k) {
        dy_feeds.emplace_back(dys[k].name(), Zeros(ys[k].type(), y_shapes[k]));
      }
      Set(&dy_feeds[j].second, r, 1);
      std::vector<Tensor> grads;
      DF_RETURN_IF_ERROR(runner.Run(dxs, std::move(dy_feeds), &grads));
      int64_t row = 0;
      for (size_t i = 0; i < grads.size(); ++i) {
        const Tensor& g = grads[i];
        if (g.shape() != x_init_values[i].shape()) {
          return errors::InvalidArgument(
              "ComputeGradientError: the gradient for x ", i, " (", xs[i].name(), ") has shape ",
              g.shape().DebugString(), " but x has shape ", x_init_values[i].shape().DebugString());
        }
        for (int64_t k = 0; k < g.NumElements(); ++k, ++row) {
          theoretical[row * y_size + col] = Get(g, k);
        }
      }
    }
  }

  // Numeric: row r of dy/dx from x element r moved by +-delta. The step is
  // the float one when any x or y is float: a float anywhere limits how
  // small a difference can be resolved.
  bool any_float = false;
  for (const Output& x : xs) any_float = any_float || x.type() == DT_FLOAT;
  for (const Output& y : ys) any_float = any_float || y.type() == DT_FLOAT;
  const double delta = any_float ? 1e-3 : 1e-5;
  int64_t row = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = x_init_values[i];
    for (int64_t k = 0; k < x.NumElements(); ++k, ++row) {
      const double v = Get(x, k);
      std::vector<Tensor> plus, minus;
      DF_RETURN_IF_ERROR(runner.Run(ys, {}, &plus, i, k, v + delta));
      DF_RETURN_IF_ERROR(runner.Run(ys, {}, &minus, i, k, v - delta));
      int64_t c = 0;
      for (size_t j = 0; j < ys.size(); ++j) {
        if (plus[j].shape() != y_shapes[j]) {
          return errors::InvalidArgument("ComputeGradientError: y ", j, " (", ys[j].name(),
                                         ") has shape ", plus[j].shape().DebugString(), ", not ",
                                         y_shapes[j].DebugString());
        }
        for (int64_t e = 0; e < plus[j].NumElements(); ++e, ++c) {
          numeric[row * y_size + c] = (Get(plus[j], e) - Get(minus[j], e)) / (2 * delta);
        }
      }
    }
  }

  // A NaN anywhere is the answer: it must not hide behind a max.
  *max_error = 0;
  for (size_t i = 0; i < theoretical.size(); ++i) {
    const double err = std::fabs(theoretical[i] - numeric[i]);
    if (std::isnan(err)) {
      *max_error = err;
      break;
    }
    *max_error = std::max(*max_error, err);
  }
  return absl::OkStatus();
}

absl::Status ComputeGradientError(const Scope& scope, const OutputList& xs,
                                  const std::vector<TensorShape>& x_shapes, const OutputList& ys,
                                  const std::vector<TensorShape>& y_shapes, double* max_error) {
  if (xs.size() != x_shapes.size()) {
    return errors::InvalidArgument("ComputeGradientError got ", xs.size(), " xs but ",
                                   x_shapes.size(), " shapes");
  }
  std::mt19937_64 rng(301);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<Tensor> values;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].node() == nullptr || !IsCheckedType(xs[i].type())) {
      return errors::InvalidArgument("ComputeGradientError x ", i,
                                     " must be a float or double tensor");
    }
    Tensor t(xs[i].type(), x_shapes[i]);
    for (int64_t k = 0; k < t.NumElements(); ++k) Set(&t, k, uniform(rng));
    values.push_back(std::move(t));
  }
  return ComputeGradientError(scope, xs, values, ys, y_shapes, max_error);
}

absl::Status ComputeGradientError(const Scope& scope, const Output& x, const Tensor& x_init_value,
                                  const Output& y, const TensorShape& y_shape, double* max_error) {
  return ComputeGradientError(scope, OutputList{x}, {x_init_value}, OutputList{y}, {y_shape},
                              max_error);
}

}  // namespace distflow
