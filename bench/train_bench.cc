// Training throughput of the Fashion-MNIST models (examples/fashion_mnist/)
// in examples per second: each model trains for one epoch over the first
// --examples training images at batch 64, from the gzipped IDX files
// through the tf.data pipeline, as `distflow train` does. Prints one line
// per model. Compare with bench/torch_train_bench.py (PyTorch, CPU eager,
// the same models and batch size) on the same machine.
//
// Then the same epoch on a parameter-server cluster through the
// ClusterCoordinator (cluster_trainer.h): 1 ps and --cluster-workers
// workers as `distflow server` processes on loopback, with
// --steps-per-execution steps per closure; prints examples/s and closures/s
// next to the in-process figure of the same run, and the CPU seconds each
// server process used (where the job computes: the workers, not the ps).
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fashion_mnist/cluster_trainer.h"
#include "fashion_mnist/trainer.h"
#include "server_process.h"

namespace {

using distflow::fashion_mnist::TrainOptions;

// User plus system CPU seconds `pid` has used so far (/proc/PID/stat's
// utime and stime); -1 when it cannot be read.
double CpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  // After "pid (comm)": state is field 3, utime and stime fields 14 and 15.
  std::istringstream rest(stat.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// One epoch on 1 ps + `workers` workers; false after printing the error.
bool RunOnCluster(const TrainOptions& o, int workers, int64_t steps_per_execution) {
  const distflow::LocalPsCluster tasks = distflow::LocalPsCluster::Start(workers);
  if (!tasks.ok()) {
    std::cerr << "error: a server did not start" << std::endl;
    return false;
  }
  absl::StatusOr<distflow::ParameterServerStrategy> strategy =
      distflow::ParameterServerStrategy::FromFlag(tasks.Flag());
  if (!strategy.ok()) {
    std::cerr << "error: " << strategy.status() << std::endl;
    return false;
  }
  distflow::fashion_mnist::ClusterTrainOptions co;
  co.train = o;
  co.steps_per_execution = steps_per_execution;
  absl::StatusOr<distflow::fashion_mnist::ClusterTrainResult> r =
      distflow::fashion_mnist::TrainOnCluster(
          *strategy, co, [](const distflow::fashion_mnist::ClusterTrainProgress&) {});
  if (!r.ok()) {
    std::cerr << "error: " << r.status() << std::endl;
    return false;
  }
  // Closures of the training pass only (evaluation closures excluded).
  const double closures = static_cast<double>(r->train.steps) / steps_per_execution;
  std::cout << absl::StrFormat(
                   "distflow %s, 1 ps + %d workers, %d steps/closure: %.0f examples/s, %.0f "
                   "closures/s (%d steps in %.2f s)",
                   o.model, workers, steps_per_execution, r->train.examples_per_second,
                   closures / r->train.seconds, r->train.steps, r->train.seconds)
            << std::endl;
  std::string cpu = "  CPU seconds: ps " + absl::StrFormat("%.2f", CpuSeconds(tasks.ps->pid()));
  for (int w = 0; w < workers; ++w) {
    absl::StrAppendFormat(&cpu, ", worker %d %.2f", w, CpuSeconds(tasks.workers[w]->pid()));
  }
  std::cout << cpu << std::endl;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Fashion-MNIST training throughput"};
  std::vector<std::string> models = {"mlp", "cnn"};
  int64_t examples = 12800;
  std::vector<int> cluster_workers = {1, 2};
  std::vector<int64_t> steps_per_execution = {1, 8};
  std::string data_dir = distflow::fashion_mnist::kDefaultFashionMnistDir;
  app.add_option("--models", models, "models to train")->capture_default_str();
  app.add_option("--examples", examples, "training images per run")->capture_default_str();
  app.add_option("--data-dir", data_dir, "Fashion-MNIST directory")->capture_default_str();
  app.add_option("--cluster-workers", cluster_workers,
                 "worker counts of the cluster runs (MLP only; empty: none)")
      ->capture_default_str();
  app.add_option("--steps-per-execution", steps_per_execution,
                 "steps per closure of the cluster runs")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  for (const std::string& model : models) {
    TrainOptions o;
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
    std::cout << absl::StrFormat("distflow %s in this process: %.0f examples/s (%d steps of 64 "
                                 "in %.2f s)",
                                 model, r->examples_per_second, r->steps, r->seconds)
              << std::endl;
    if (model != "mlp") continue;
    for (int workers : cluster_workers) {
      for (int64_t k : steps_per_execution) {
        if (!RunOnCluster(o, workers, k)) return 1;
      }
    }
  }
  return 0;
}
