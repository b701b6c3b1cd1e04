#include "demo/demo.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "demo/local_cluster.h"
#include "distflow/core/status.h"
#include "nlohmann/json.hpp"

namespace distflow {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop = true; }

std::string Bar(int64_t step, int64_t total) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * std::min<int64_t>(step, total) / std::max<int64_t>(total, 1));
  return absl::StrCat("[", std::string(filled, '#'), std::string(kWidth - filled, '.'), "]");
}

}  // namespace

void AddDemoFlags(CLI::App* app, DemoFlags* flags) {
  TrainerOptions& t = flags->trainer;
  app->add_option("--mode", t.mode, "async or sync (synchronous replicas)")->capture_default_str();
  app->add_option("--workers", t.workers, "worker processes")->capture_default_str();
  app->add_option("--ps", t.ps, "parameter server processes")->capture_default_str();
  app->add_option("--steps", t.steps, "train until the global step reaches this")
      ->capture_default_str();
  app->add_option("--checkpoint-dir", t.checkpoint_dir,
                  "save checkpoints here and resume from the latest one");
  app->add_option("--checkpoint-every", t.checkpoint_every, "steps between checkpoints")
      ->capture_default_str();
  app->add_option("--batch-size", t.batch_size, "examples per worker step")->capture_default_str();
  app->add_option("--learning-rate", t.learning_rate)->capture_default_str();
  app->add_option("--seed", t.seed, "seed of the generated data")->capture_default_str();
  app->add_option("--output", flags->output, "text or json")->capture_default_str();
}

absl::Status RunDemo(const DemoFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.output != "text" && flags.output != "json") {
    return errors::InvalidArgument("--output must be text or json, got '", flags.output, "'");
  }
  const TrainerOptions& o = flags.trainer;
  if (o.workers < 1 || o.ps < 1) return errors::InvalidArgument("--workers and --ps must be >= 1");
  DF_ASSIGN_OR_RETURN(std::unique_ptr<LocalCluster> cluster, LocalCluster::Start(o.ps, o.workers));
  for (const LocalCluster::Task& t : cluster->tasks()) {
    err << "started " << t.name() << " (pid " << t.pid << ") on " << t.address() << std::endl;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const bool tty = flags.output == "text" && isatty(STDOUT_FILENO);
  const int64_t every = std::max<int64_t>(1, o.steps / 10);
  int64_t last_printed = -1;
  auto last_draw = std::chrono::steady_clock::now();
  auto on_progress = [&](const TrainerProgress& p) {
    if (flags.output != "text") return;
    if (tty) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_draw < std::chrono::milliseconds(100) && p.step < o.steps) return;
      last_draw = now;
      out << "\r" << Bar(p.step, o.steps)
          << absl::StrFormat(" step %d/%d  loss %.4f  weight %.4f  bias %.4f", p.step, o.steps,
                             p.loss, p.weight, p.bias)
          << std::flush;
    } else if (p.step / every != last_printed / every || p.step >= o.steps) {
      last_printed = p.step;
      out << absl::StrFormat("step %d  loss %.4f  weight %.4f  bias %.4f", p.step, p.loss,
                             p.weight, p.bias)
          << std::endl;
    }
  };

  if (flags.output == "text") {
    out << "training y = 2x + 10 (" << o.mode << ", " << o.workers << " workers, " << o.ps
        << " ps) for " << o.steps << " steps" << std::endl;
  }
  absl::StatusOr<TrainerResult> result =
      TrainLinearRegression(o, cluster->cluster_def(), on_progress, &g_stop);
  if (tty) out << std::endl;
  cluster->Stop();
  if (!result.ok()) return result.status();

  if (flags.output == "json") {
    nlohmann::ordered_json j{{"mode", result->mode},     {"steps", result->steps},
                             {"loss", result->loss},     {"weight", result->weight},
                             {"bias", result->bias},     {"seconds", result->seconds}};
    out << j.dump() << std::endl;
  } else {
    if (!result->restored_from.empty()) {
      out << "resumed from " << result->restored_from << " at step " << result->start_step
          << std::endl;
    }
    out << absl::StrFormat(
               "done: %d steps (%d updates in this run) in %.1fs  loss %.4f  weight %.4f (true 2)"
               "  bias %.4f (true 10)%s",
               result->steps, result->updates, result->seconds, result->loss, result->weight,
               result->bias, g_stop ? "  [stopped early]" : "")
        << std::endl;
  }
  return absl::OkStatus();
}

}  // namespace distflow
