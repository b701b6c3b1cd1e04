// Training throughput of the Fashion-MNIST models (examples/fashion_mnist/)
// in examples per second: each model trains for one epoch over the first
// --examples training images at batch 64, from the gzipped IDX files
// through the tf.data pipeline, as `distflow train` does. Prints one line
// per model. Compare with bench/torch_train_bench.py (PyTorch, CPU eager,
// the same models and batch size) on the same machine.
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "fashion_mnist/trainer.h"

int main(int argc, char** argv) {
  CLI::App app{"Fashion-MNIST training throughput"};
  std::vector<std::string> models = {"mlp", "cnn"};
  int64_t examples = 12800;
  std::string data_dir = distflow::fashion_mnist::kDefaultFashionMnistDir;
  app.add_option("--models", models, "models to train")->capture_default_str();
  app.add_option("--examples", examples, "training images per run")->capture_default_str();
  app.add_option("--data-dir", data_dir, "Fashion-MNIST directory")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  for (const std::string& model : models) {
    distflow::fashion_mnist::TrainOptions o;
    o.model = model;
    o.epochs = 1;
    o.train_limit = examples;
    o.test_limit = 1000;
    o.data_dir = data_dir;
    absl::StatusOr<distflow::fashion_mnist::TrainResult> r =
        distflow::fashion_mnist::Train(o, [](const distflow::fashion_mnist::TrainProgress&) {});
    if (!r.ok()) {
      std::cerr << "error: " << r.status() << std::endl;
      return 1;
    }
    std::cout << absl::StrFormat("distflow %s: %.0f examples/s (%d steps of 64 in %.2f s)", model,
                                 r->examples_per_second, r->steps, r->seconds)
              << std::endl;
  }
  return 0;
}
