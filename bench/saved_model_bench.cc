// SavedModel serving figures on the models TensorFlow wrote
// (../shared/saved_models): LoadSavedModel's time (best of REPEATS loads:
// parse, graph import, restore, init op) and the latency of serving_default
// per call at batch 1 and 32 (median and 99th percentile of CALLS calls
// after 10 warm-up calls, zero-filled inputs of the signature's shapes), and
// for the half_plus_two TF1 export the regress path through ParseExample.
// Usage:
//   saved_model_bench [MODELS_DIR [REPEATS [CALLS]]]   (default ../shared/saved_models, 5, 200)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distflow/example.pb.h"
#include "distflow/saved_model/loader.h"

namespace distflow {
namespace {

using Feeds = std::vector<std::pair<std::string, Tensor>>;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void Check(const absl::Status& s, const std::string& what) {
  if (!s.ok()) {
    std::fprintf(stderr, "saved_model_bench: %s: %s\n", what.c_str(), s.ToString().c_str());
    std::exit(1);
  }
}

// Zeros for each input of `sig`, unknown dims made `batch`.
Feeds ZeroFeeds(const SignatureDef& sig, int64_t batch) {
  Feeds feeds;
  for (const auto& [key, info] : sig.inputs()) {
    std::vector<int64_t> dims;
    for (const auto& d : info.tensor_shape().dim()) dims.push_back(d.size() < 0 ? batch : d.size());
    Tensor t(info.dtype(), TensorShape(dims));
    if (info.dtype() != DT_STRING) std::fill_n(static_cast<char*>(t.raw_data()), t.TotalBytes(), 0);
    feeds.emplace_back(info.name(), t);
  }
  return feeds;
}

// Median and 99th percentile, in microseconds, of `calls` runs.
std::pair<double, double> Latency(Session& session, const Feeds& feeds,
                                  const std::vector<std::string>& fetches, int calls) {
  std::vector<Tensor> out;
  for (int i = 0; i < 10; ++i) Check(session.Run(feeds, fetches, {}, &out), "warm-up");
  std::vector<double> us;
  for (int i = 0; i < calls; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    Check(session.Run(feeds, fetches, {}, &out), "call");
    us.push_back(Seconds(t0) * 1e6);
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[std::min(us.size() - 1, us.size() * 99 / 100)]};
}

int Main(int argc, char** argv) {
  const std::string models =
      argc > 1 ? argv[1] : absl::StrCat(DISTFLOW_SOURCE_DIR, "/../shared/saved_models");
  int repeats = 5, calls = 200;
  if ((argc > 2 && !absl::SimpleAtoi(argv[2], &repeats)) ||
      (argc > 3 && !absl::SimpleAtoi(argv[3], &calls)) || repeats < 1 || calls < 10) {
    std::fprintf(stderr, "usage: saved_model_bench [MODELS_DIR [REPEATS [CALLS >= 10]]]\n");
    return 2;
  }
  std::printf("%-26s %10s %22s %22s\n", "model", "load ms", "batch 1 us (p50/p99)",
              "batch 32 us (p50/p99)");
  for (const char* name : {"keras_mnist_cnn_bn", "keras_heart_mlp", "keras_stock_lstm",
                           "keras_imdb_bilstm", "serving_half_plus_two_cpu"}) {
    const std::string dir = absl::StrCat(models, "/", name);
    double load = 1e9;
    SavedModelBundle bundle;
    for (int r = 0; r < repeats; ++r) {
      SavedModelBundle b;
      const auto t0 = std::chrono::steady_clock::now();
      Check(LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &b), dir);
      load = std::min(load, Seconds(t0));
      bundle = std::move(b);
    }
    const SignatureDef& sig = bundle.meta_graph_def.signature_def().at("serving_default");
    std::vector<std::string> fetches;
    for (const auto& [key, info] : sig.outputs()) fetches.push_back(info.name());
    const auto one = Latency(*bundle.session, ZeroFeeds(sig, 1), fetches, calls);
    const auto many = Latency(*bundle.session, ZeroFeeds(sig, 32), fetches, calls);
    std::printf("%-26s %10.1f %10.0f / %-10.0f %10.0f / %-10.0f\n", name, load * 1e3, one.first,
                one.second, many.first, many.second);
    if (std::string(name) == "serving_half_plus_two_cpu") {
      Example e;
      (*e.mutable_features()->mutable_feature())["x"].mutable_float_list()->add_value(1);
      for (int64_t batch : {1, 32}) {
        Tensor examples(DT_STRING, TensorShape({batch}));
        for (auto& s : examples.flat<std::string>()) s = e.SerializeAsString();
        const auto r = Latency(*bundle.session, {{"tf_example:0", examples}}, {"y:0"}, calls);
        std::printf("  regress_x_to_y (ParseExample), batch %2lld: %.0f / %.0f us (p50/p99)\n",
                    static_cast<long long>(batch), r.first, r.second);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace distflow

int main(int argc, char** argv) { return distflow::Main(argc, argv); }
