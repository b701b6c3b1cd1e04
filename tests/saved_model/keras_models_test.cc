// The Keras SavedModels in ../shared/saved_models, loaded with
// LoadSavedModel and run through serving_default, against forward passes
// computed here in plain loops from the weights in their checkpoints:
// keras_heart_mlp (six Dense layers, relu then sigmoid) and keras_stock_lstm
// (four stacked LSTMs with relu activations, a TF2 While loop over
// TensorLists, then a Dense on every step). keras_imdb_bilstm (Embedding and
// a bidirectional LSTM, whose backward half reverses its input with
// ReverseV2) and keras_mnist_cnn_bn run, giving a probability and a
// distribution per example.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distflow/framework/tensor_bundle.h"
#include "distflow/saved_model/loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

const std::string kModels = absl::StrCat(DISTFLOW_SOURCE_DIR, "/../shared/saved_models");

// A row-major matrix (or vector, cols = 1 row) read from a checkpoint.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> v;
  float at(int64_t r, int64_t c) const { return v[r * cols + c]; }
};

Matrix Read(const BundleReader& r, const std::string& name) {
  auto t = r.Read(name, DT_FLOAT);
  EXPECT_TRUE(t.ok()) << t.status();
  Matrix m;
  m.rows = t->dims() == 2 ? t->dim_size(0) : 1;
  m.cols = t->dims() == 2 ? t->dim_size(1) : t->NumElements();
  m.v.assign(t->flat<float>().begin(), t->flat<float>().end());
  return m;
}

// x (n) times w (n x m) plus b (m).
std::vector<float> Affine(const std::vector<float>& x, const Matrix& w, const Matrix& b) {
  std::vector<float> y(w.cols);
  for (int64_t j = 0; j < w.cols; ++j) {
    double s = b.v[j];
    for (int64_t i = 0; i < w.rows; ++i) s += double{x[i]} * w.at(i, j);
    y[j] = static_cast<float>(s);
  }
  return y;
}

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float Relu(float x) { return x > 0 ? x : 0; }

struct Loaded {
  SavedModelBundle bundle;
  std::unique_ptr<BundleReader> weights;
};

void Load(const std::string& model, Loaded* out) {
  absl::Status s = LoadSavedModel(SessionOptions(), RunOptions(), kModels + "/" + model, {"serve"},
                                  &out->bundle);
  ASSERT_TRUE(s.ok()) << s;
  auto r = BundleReader::Open(kModels + "/" + model + "/variables/variables");
  ASSERT_TRUE(r.ok()) << r.status();
  out->weights = std::move(*r);
}

// Runs serving_default with one input and returns its only output.
Tensor Serve(const SavedModelBundle& b, const Tensor& input) {
  const SignatureDef& sig = b.meta_graph_def.signature_def().at("serving_default");
  EXPECT_EQ(sig.inputs_size(), 1);
  EXPECT_EQ(sig.outputs_size(), 1);
  std::vector<Tensor> out;
  absl::Status s = b.session->Run({{sig.inputs().begin()->second.name(), input}},
                                  {sig.outputs().begin()->second.name()}, {}, &out);
  EXPECT_TRUE(s.ok()) << s;
  return s.ok() ? out[0] : Tensor();
}

TEST(KerasModelsTest, HeartMlpMatchesItsDenseLayers) {
  Loaded m;
  ASSERT_NO_FATAL_FAILURE(Load("keras_heart_mlp", &m));
  const int batch = 3;
  Tensor x(DT_FLOAT, TensorShape({batch, 13}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = 0.1f * (i % 17) - 0.4f;
  Tensor y = Serve(m.bundle, x);
  ASSERT_EQ(y.shape(), TensorShape({batch, 1}));
  for (int b = 0; b < batch; ++b) {
    std::vector<float> h(x.flat<float>().begin() + b * 13, x.flat<float>().begin() + b * 13 + 13);
    for (int layer = 0; layer < 6; ++layer) {
      const std::string p = absl::StrCat("layer_with_weights-", layer, "/");
      h = Affine(h, Read(*m.weights, p + "kernel/.ATTRIBUTES/VARIABLE_VALUE"),
                 Read(*m.weights, p + "bias/.ATTRIBUTES/VARIABLE_VALUE"));
      for (float& v : h) v = layer < 5 ? Relu(v) : Sigmoid(v);
    }
    EXPECT_NEAR(y.flat<float>()[b], h[0], 1e-5) << "example " << b;
  }
}

// One Keras LSTM layer (gates i, f, c, o; relu activation, sigmoid
// recurrent activation) over a sequence of vectors, returning every step.
std::vector<std::vector<float>> Lstm(const std::vector<std::vector<float>>& xs, const Matrix& w,
                                     const Matrix& u, const Matrix& bias) {
  const int64_t units = u.rows;
  std::vector<float> h(units, 0), c(units, 0);
  const Matrix no_bias{1, 4 * units, std::vector<float>(4 * units, 0)};
  std::vector<std::vector<float>> out;
  for (const auto& x : xs) {
    std::vector<float> z = Affine(x, w, bias);
    const std::vector<float> r = Affine(h, u, no_bias);
    for (int64_t j = 0; j < 4 * units; ++j) z[j] += r[j];
    for (int64_t j = 0; j < units; ++j) {
      const float i = Sigmoid(z[j]), f = Sigmoid(z[units + j]);
      const float g = Relu(z[2 * units + j]), o = Sigmoid(z[3 * units + j]);
      c[j] = f * c[j] + i * g;
      h[j] = o * Relu(c[j]);
    }
    out.push_back(h);
  }
  return out;
}

TEST(KerasModelsTest, StockLstmMatchesFourStackedLstmsAndADense) {
  Loaded m;
  ASSERT_NO_FATAL_FAILURE(Load("keras_stock_lstm", &m));
  const int batch = 2, steps = 100;
  Tensor x(DT_FLOAT, TensorShape({batch, steps, 1}));
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < steps; ++t) {
      x.flat<float>()[b * steps + t] = 0.3f + 0.2f * std::sin(0.1f * t + b);
    }
  }
  Tensor y = Serve(m.bundle, x);
  ASSERT_EQ(y.shape(), TensorShape({batch, steps, 1}));
  auto var = [&m](int i) {
    return Read(*m.weights, absl::StrCat("variables/", i, "/.ATTRIBUTES/VARIABLE_VALUE"));
  };
  const Matrix dense_w = Read(*m.weights, "layer_with_weights-4/kernel/.ATTRIBUTES/VARIABLE_VALUE");
  const Matrix dense_b = Read(*m.weights, "layer_with_weights-4/bias/.ATTRIBUTES/VARIABLE_VALUE");
  for (int b = 0; b < batch; ++b) {
    std::vector<std::vector<float>> seq;
    for (int t = 0; t < steps; ++t) seq.push_back({x.flat<float>()[b * steps + t]});
    for (int layer = 0; layer < 4; ++layer) {
      seq = Lstm(seq, var(3 * layer), var(3 * layer + 1), var(3 * layer + 2));
    }
    for (int t = 0; t < steps; ++t) {
      EXPECT_NEAR(y.flat<float>()[b * steps + t], Affine(seq[t], dense_w, dense_b)[0], 1e-4)
          << "example " << b << " step " << t;
    }
  }
}

TEST(KerasModelsTest, ImdbBidirectionalLstmAndMnistCnnRun) {
  Loaded imdb;
  ASSERT_NO_FATAL_FAILURE(Load("keras_imdb_bilstm", &imdb));
  Tensor words(DT_FLOAT, TensorShape({2, 200}));
  for (int64_t i = 0; i < words.NumElements(); ++i) words.flat<float>()[i] = (i * 37) % 500;
  Tensor p = Serve(imdb.bundle, words);
  ASSERT_EQ(p.shape(), TensorShape({2, 1}));
  for (float v : p.flat<float>()) {
    EXPECT_GT(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
  EXPECT_NE(p.flat<float>()[0], p.flat<float>()[1]);

  Loaded mnist;
  ASSERT_NO_FATAL_FAILURE(Load("keras_mnist_cnn_bn", &mnist));
  Tensor image(DT_FLOAT, TensorShape({2, 28, 28, 1}));
  for (int64_t i = 0; i < image.NumElements(); ++i) {
    image.flat<float>()[i] = ((i % 28) > 10 && (i % 28) < 18) ? 1.0f : 0.0f;
  }
  Tensor probs = Serve(mnist.bundle, image);
  ASSERT_EQ(probs.shape(), TensorShape({2, 10}));
  for (int b = 0; b < 2; ++b) {
    double sum = 0;
    for (int k = 0; k < 10; ++k) sum += probs.flat<float>()[b * 10 + k];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

}  // namespace
}  // namespace distflow
