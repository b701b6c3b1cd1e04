// The Keras SavedModels in ../shared/saved_models, loaded with
// LoadSavedModel and run through serving_default, against forward passes
// computed here in plain loops from the weights in their checkpoints:
// keras_heart_mlp (six Dense layers, relu then sigmoid) and keras_stock_lstm
// (four stacked LSTMs with relu activations, a TF2 While loop over
// TensorLists, then a Dense on every step), keras_mnist_cnn_bn (three
// convolutions with batch normalization, max pooling, two Dense layers) and
// keras_heart_featurecols (feature columns over hash tables and buckets) and
// keras_imdb_bilstm (Embedding, a bidirectional tanh LSTM whose backward
// half reverses its input with ReverseV2, two Dense layers).
#include <algorithm>
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

// One Keras LSTM layer (gates i, f, c, o; `activation`, sigmoid recurrent
// activation) over a sequence of vectors, returning every step.
std::vector<std::vector<float>> Lstm(const std::vector<std::vector<float>>& xs, const Matrix& w,
                                     const Matrix& u, const Matrix& bias,
                                     float (*activation)(float) = Relu) {
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
      const float g = activation(z[2 * units + j]), o = Sigmoid(z[3 * units + j]);
      c[j] = f * c[j] + i * g;
      h[j] = o * activation(c[j]);
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

float Tanh(float x) { return std::tanh(x); }

TEST(KerasModelsTest, ImdbMatchesItsEmbeddingBidirectionalLstmAndDenseLayers) {
  Loaded m;
  ASSERT_NO_FATAL_FAILURE(Load("keras_imdb_bilstm", &m));
  const int batch = 2, steps = 200;
  Tensor words(DT_FLOAT, TensorShape({batch, steps}));
  for (int64_t i = 0; i < words.NumElements(); ++i) words.flat<float>()[i] = (i * 37) % 9973;
  Tensor p = Serve(m.bundle, words);
  ASSERT_EQ(p.shape(), TensorShape({batch, 1}));
  const BundleReader& w = *m.weights;
  const Matrix embeddings = Read(w, "layer_with_weights-0/embeddings/.ATTRIBUTES/VARIABLE_VALUE");
  auto var = [&w](int i) {
    return Read(w, absl::StrCat("variables/", i, "/.ATTRIBUTES/VARIABLE_VALUE"));
  };
  for (int b = 0; b < batch; ++b) {
    std::vector<std::vector<float>> seq;
    for (int t = 0; t < steps; ++t) {
      const int64_t id = static_cast<int64_t>(words.flat<float>()[b * steps + t]);
      seq.emplace_back(embeddings.v.begin() + id * 16, embeddings.v.begin() + (id + 1) * 16);
    }
    std::vector<float> h = Lstm(seq, var(1), var(2), var(3), Tanh).back();
    std::reverse(seq.begin(), seq.end());
    const std::vector<float> backward = Lstm(seq, var(4), var(5), var(6), Tanh).back();
    h.insert(h.end(), backward.begin(), backward.end());
    h = Affine(h, Read(w, "layer_with_weights-2/kernel/.ATTRIBUTES/VARIABLE_VALUE"),
               Read(w, "layer_with_weights-2/bias/.ATTRIBUTES/VARIABLE_VALUE"));
    for (float& v : h) v = Relu(v);
    const float expected =
        Sigmoid(Affine(h, Read(w, "layer_with_weights-3/kernel/.ATTRIBUTES/VARIABLE_VALUE"),
                       Read(w, "layer_with_weights-3/bias/.ATTRIBUTES/VARIABLE_VALUE"))[0]);
    EXPECT_NEAR(p.flat<float>()[b], expected, 1e-5) << "example " << b;
  }
}

// An HWC image as the CNN reference computes on it.
struct Image {
  int h, w, c;
  std::vector<float> v;
  float& at(int y, int x, int k) { return v[(y * w + x) * c + k]; }
};

// 3x3 VALID convolution (HWIO kernel), bias, relu.
Image ConvRelu(Image& in, const BundleReader& w, int layer) {
  const std::string p = absl::StrCat("layer_with_weights-", layer, "/");
  auto kernel = w.Read(p + "kernel/.ATTRIBUTES/VARIABLE_VALUE", DT_FLOAT);
  EXPECT_TRUE(kernel.ok());
  const Matrix bias = Read(w, p + "bias/.ATTRIBUTES/VARIABLE_VALUE");
  const int out_c = static_cast<int>(kernel->dim_size(3));
  Image out{in.h - 2, in.w - 2, out_c, {}};
  out.v.assign(static_cast<size_t>(out.h) * out.w * out_c, 0);
  auto k = kernel->flat<float>();
  for (int y = 0; y < out.h; ++y) {
    for (int x = 0; x < out.w; ++x) {
      for (int o = 0; o < out_c; ++o) {
        double sum = bias.v[o];
        for (int dy = 0; dy < 3; ++dy) {
          for (int dx = 0; dx < 3; ++dx) {
            for (int i = 0; i < in.c; ++i) {
              sum += double{in.at(y + dy, x + dx, i)} * k[((dy * 3 + dx) * in.c + i) * out_c + o];
            }
          }
        }
        out.at(y, x, o) = Relu(static_cast<float>(sum));
      }
    }
  }
  return out;
}

Image MaxPool(Image& in) {
  Image out{in.h / 2, in.w / 2, in.c, {}};
  out.v.assign(static_cast<size_t>(out.h) * out.w * out.c, 0);
  for (int y = 0; y < out.h; ++y) {
    for (int x = 0; x < out.w; ++x) {
      for (int k = 0; k < in.c; ++k) {
        out.at(y, x, k) = std::max({in.at(2 * y, 2 * x, k), in.at(2 * y + 1, 2 * x, k),
                                    in.at(2 * y, 2 * x + 1, k), in.at(2 * y + 1, 2 * x + 1, k)});
      }
    }
  }
  return out;
}

// Per-channel batch normalization with the layer's moving statistics.
void BatchNorm(const BundleReader& w, int layer, std::vector<float>* x);

TEST(KerasModelsTest, MnistCnnMatchesItsConvolutionsNormsAndDenseLayers) {
  Loaded m;
  ASSERT_NO_FATAL_FAILURE(Load("keras_mnist_cnn_bn", &m));
  const int batch = 2;
  Tensor images(DT_FLOAT, TensorShape({batch, 28, 28, 1}));
  for (int64_t i = 0; i < images.NumElements(); ++i) {
    const int64_t y = (i / 28) % 28, x = i % 28, b = i / 784;
    images.flat<float>()[i] = (x > 8 + b && x < 18 && y > 4) ? 1.0f : 0.1f * ((x * y) % 3);
  }
  Tensor probs = Serve(m.bundle, images);
  ASSERT_EQ(probs.shape(), TensorShape({batch, 10}));
  const BundleReader& w = *m.weights;
  // Channels-last BatchNorm over an image: the per-channel rule on each pixel.
  auto norm = [&w](int layer, Image* im) {
    for (int p = 0; p < im->h * im->w; ++p) {
      std::vector<float> px(im->v.begin() + p * im->c, im->v.begin() + (p + 1) * im->c);
      BatchNorm(w, layer, &px);
      std::copy(px.begin(), px.end(), im->v.begin() + p * im->c);
    }
  };
  for (int b = 0; b < batch; ++b) {
    Image im{
        28,
        28,
        1,
        {images.flat<float>().begin() + b * 784, images.flat<float>().begin() + (b + 1) * 784}};
    im = ConvRelu(im, w, 0);
    norm(1, &im);
    im = MaxPool(im);
    im = ConvRelu(im, w, 2);
    norm(3, &im);
    im = MaxPool(im);
    im = ConvRelu(im, w, 4);
    norm(5, &im);
    ASSERT_EQ(im.v.size(), 576u);
    std::vector<float> h =
        Affine(im.v, Read(w, "layer_with_weights-6/kernel/.ATTRIBUTES/VARIABLE_VALUE"),
               Read(w, "layer_with_weights-6/bias/.ATTRIBUTES/VARIABLE_VALUE"));
    for (float& v : h) v = Relu(v);
    std::vector<float> logits =
        Affine(h, Read(w, "layer_with_weights-7/kernel/.ATTRIBUTES/VARIABLE_VALUE"),
               Read(w, "layer_with_weights-7/bias/.ATTRIBUTES/VARIABLE_VALUE"));
    const float top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits) sum += std::exp(l - top);
    for (int k = 0; k < 10; ++k) {
      EXPECT_NEAR(probs.flat<float>()[b * 10 + k], std::exp(logits[k] - top) / sum, 1e-5)
          << "example " << b << " class " << k;
    }
  }
}

// keras_heart_featurecols: DenseFeatures over eleven feature columns
// (bucketized Age, vocabulary-list indicators through hash tables, numeric
// columns; concatenated in key order), then BatchNormalization, Dense 256
// relu, BatchNormalization, Dense 256 relu, BatchNormalization, Dense 1
// sigmoid.
struct HeartRecord {
  int64_t age;
  std::string chest_pain;
  int64_t cholesterol;
  std::string exercise_angina;
  int64_t fasting_bs;
  int64_t max_hr;
  double oldpeak;
  int64_t resting_bp;
  std::string resting_ecg;
  std::string st_slope;
  std::string sex;
};

// One-hot of `value`'s position in `vocabulary` (all zeros when absent).
template <typename T>
void Indicator(const std::vector<T>& vocabulary, const T& value, std::vector<float>* out) {
  for (const T& v : vocabulary) out->push_back(v == value ? 1.0f : 0.0f);
}

std::vector<float> HeartFeatures(const HeartRecord& r) {
  std::vector<float> f;
  int bucket = 0;  // boundaries 28, 29, ..., 76
  for (int b = 28; b <= 76; ++b) bucket += r.age >= b;
  for (int i = 0; i < 50; ++i) f.push_back(i == bucket ? 1.0f : 0.0f);
  Indicator<std::string>({"ATA", "NAP", "ASY", "TA"}, r.chest_pain, &f);
  f.push_back(static_cast<float>(r.cholesterol));
  Indicator<std::string>({"N", "Y"}, r.exercise_angina, &f);
  Indicator<int64_t>({0, 1}, r.fasting_bs, &f);
  Indicator<int64_t>(
      {172, 156, 98,  108, 122, 170, 142, 130, 120, 99,  145, 140, 137, 150, 166, 165, 125,
       160, 164, 138, 178, 112, 118, 127, 114, 154, 155, 87,  148, 100, 168, 184, 121, 153,
       134, 96,  174, 175, 144, 82,  135, 115, 128, 116, 94,  110, 92,  180, 152, 124, 106,
       185, 139, 190, 146, 158, 132, 176, 119, 188, 162, 105, 90,  136, 167, 129, 102, 143,
       103, 91,  126, 93,  131, 149, 123, 182, 141, 77,  109, 133, 179, 113, 104, 95,  72,
       97,  117, 86,  63,  157, 83,  60,  70,  163, 67,  78,  84,  111, 80,  107, 161, 69,
       88,  73,  159, 151, 181, 186, 177, 173, 169, 171, 147, 71,  192, 195, 194, 187, 202},
      r.max_hr, &f);
  f.push_back(static_cast<float>(r.oldpeak));
  f.push_back(static_cast<float>(r.resting_bp));
  Indicator<std::string>({"Normal", "ST", "LVH"}, r.resting_ecg, &f);
  Indicator<std::string>({"Up", "Flat", "Down"}, r.st_slope, &f);
  Indicator<std::string>({"M", "F"}, r.sex, &f);
  return f;
}

void BatchNorm(const BundleReader& w, int layer, std::vector<float>* x) {
  const std::string p = absl::StrCat("layer_with_weights-", layer, "/");
  const std::string v = "/.ATTRIBUTES/VARIABLE_VALUE";
  const Matrix gamma = Read(w, p + "gamma" + v), beta = Read(w, p + "beta" + v);
  const Matrix mean = Read(w, p + "moving_mean" + v), var = Read(w, p + "moving_variance" + v);
  for (size_t i = 0; i < x->size(); ++i) {
    (*x)[i] = gamma.v[i] * ((*x)[i] - mean.v[i]) / std::sqrt(var.v[i] + 0.001f) + beta.v[i];
  }
}

TEST(KerasModelsTest, HeartFeatureColumnsMatchTheirTablesBucketsAndLayers) {
  Loaded m;
  ASSERT_NO_FATAL_FAILURE(Load("keras_heart_featurecols", &m));
  const std::vector<HeartRecord> records = {
      {40, "ATA", 289, "N", 0, 172, 0.0, 140, "Normal", "Up", "M"},
      {49, "NAP", 180, "N", 0, 156, 1.0, 160, "Normal", "Flat", "F"},
      {63, "ASY", 0, "Y", 1, 101, 2.5, 130, "LVH", "Down",
       "M"},  // MaxHR 101: not in the vocabulary
      {20, "XX", 250, "?", 7, 202, -0.5, 110, "ST", "Up", "F"}};  // unknown strings and ints
  const int64_t n = static_cast<int64_t>(records.size());
  const SignatureDef& sig = m.bundle.meta_graph_def.signature_def().at("serving_default");
  std::vector<std::pair<std::string, Tensor>> feeds;
  auto feed = [&](const std::string& key, DataType dtype, auto get) {
    Tensor t(dtype, TensorShape({n}));
    for (int64_t i = 0; i < n; ++i) {
      using V = decltype(get(records[0]));
      t.flat<V>()[i] = get(records[i]);
    }
    feeds.emplace_back(sig.inputs().at(key).name(), t);
  };
  feed("Age", DT_INT64, [](const HeartRecord& r) { return r.age; });
  feed("ChestPainType", DT_STRING, [](const HeartRecord& r) { return r.chest_pain; });
  feed("Cholesterol", DT_INT64, [](const HeartRecord& r) { return r.cholesterol; });
  feed("ExerciseAngina", DT_STRING, [](const HeartRecord& r) { return r.exercise_angina; });
  feed("FastingBS", DT_INT64, [](const HeartRecord& r) { return r.fasting_bs; });
  feed("MaxHR", DT_INT64, [](const HeartRecord& r) { return r.max_hr; });
  feed("Oldpeak", DT_DOUBLE, [](const HeartRecord& r) { return r.oldpeak; });
  feed("RestingBP", DT_INT64, [](const HeartRecord& r) { return r.resting_bp; });
  feed("RestingECG", DT_STRING, [](const HeartRecord& r) { return r.resting_ecg; });
  feed("ST_Slope", DT_STRING, [](const HeartRecord& r) { return r.st_slope; });
  feed("Sex", DT_STRING, [](const HeartRecord& r) { return r.sex; });
  std::vector<Tensor> out;
  absl::Status s = m.bundle.session->Run(feeds, {sig.outputs().at("output_1").name()}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out[0].shape(), TensorShape({n, 1}));
  const BundleReader& w = *m.weights;
  auto dense = [&w](int layer, const std::vector<float>& x) {
    const std::string p = absl::StrCat("layer_with_weights-", layer, "/");
    return Affine(x, Read(w, p + "kernel/.ATTRIBUTES/VARIABLE_VALUE"),
                  Read(w, p + "bias/.ATTRIBUTES/VARIABLE_VALUE"));
  };
  for (int64_t i = 0; i < n; ++i) {
    std::vector<float> x = HeartFeatures(records[i]);
    ASSERT_EQ(x.size(), 188u);
    BatchNorm(w, 0, &x);
    x = dense(1, x);
    for (float& v : x) v = Relu(v);
    BatchNorm(w, 2, &x);
    x = dense(3, x);
    for (float& v : x) v = Relu(v);
    BatchNorm(w, 4, &x);
    const float p = Sigmoid(dense(5, x)[0]);
    EXPECT_NEAR(out[0].flat<float>()[i], p, 1e-5) << "record " << i;
  }
}

}  // namespace
}  // namespace distflow
