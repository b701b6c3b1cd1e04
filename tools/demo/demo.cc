#include "demo/demo.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "distflow/core/status.h"
#include "distflow/training/saver.h"
#include "launcher/local_servers.h"
#include "nlohmann/json.hpp"

namespace distflow {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_stop_signal{0};

void OnSignal(int sig) {
  g_stop_signal = sig;
  g_stop = true;
}

// Bounds on the flags, checked before any server process starts: a bad flag
// is an error naming it, never a crash (--checkpoint-every 0 divided by zero)
// or a fork bomb (--workers 100000).
constexpr int kMaxTasks = 64;
// How often the demo checks that its tasks are alive and not frozen.
constexpr absl::Duration kTaskCheckPeriod = absl::Milliseconds(200);
constexpr int64_t kMaxBatch = int64_t{1} << 24;

absl::Status ValidateDemoFlags(const DemoFlags& flags) {
  const TrainerOptions& o = flags.trainer;
  if (flags.output != "text" && flags.output != "json") {
    return errors::InvalidArgument("--output must be text or json, got '", flags.output, "'");
  }
  if (o.mode != "async" && o.mode != "sync") {
    return errors::InvalidArgument("--mode must be async or sync, got '", o.mode, "'");
  }
  if (o.workers < 1 || o.workers > kMaxTasks) {
    return errors::InvalidArgument("--workers must be between 1 and ", kMaxTasks, ", got ",
                                   o.workers);
  }
  if (o.ps < 1 || o.ps > kMaxTasks) {
    return errors::InvalidArgument("--ps must be between 1 and ", kMaxTasks, ", got ", o.ps);
  }
  if (o.steps < 1 || o.steps > (int64_t{1} << 62)) {
    return errors::InvalidArgument("--steps must be between 1 and 2^62, got ", o.steps);
  }
  if (o.checkpoint_every < 1) {
    return errors::InvalidArgument("--checkpoint-every must be at least 1, got ",
                                   o.checkpoint_every);
  }
  if (o.batch_size < 1 || o.batch_size > kMaxBatch) {
    return errors::InvalidArgument("--batch-size must be between 1 and ", kMaxBatch, ", got ",
                                   o.batch_size);
  }
  if (!std::isfinite(o.learning_rate) || o.learning_rate <= 0) {
    return errors::InvalidArgument("--learning-rate must be a positive finite number, got ",
                                   o.learning_rate);
  }
  if (!o.checkpoint_dir.empty()) {
    // A damaged checkpoint state file is an error now, not a fresh start
    // after the servers are up (the trainer checks it again).
    absl::StatusOr<std::string> latest = Saver::LatestCheckpoint(o.checkpoint_dir);
    if (!latest.ok() && !absl::IsNotFound(latest.status())) return latest.status();
  }
  return absl::OkStatus();
}

std::string Bar(int64_t step, int64_t total) {
  constexpr int kWidth = 30;
  const int filled =
      static_cast<int>(kWidth * std::min<int64_t>(step, total) / std::max<int64_t>(total, 1));
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
  app->add_flag("--allow-nonfinite", t.allow_nonfinite,
                "keep training when the loss or a weight becomes NaN or infinite "
                "(by default that stops the job with an error)");
}

int DemoStopSignal() { return g_stop_signal.load(); }

absl::Status RunDemo(const DemoFlags& flags, std::ostream& out, std::ostream& err) {
  DF_RETURN_IF_ERROR(ValidateDemoFlags(flags));
  const TrainerOptions& o = flags.trainer;
  DF_ASSIGN_OR_RETURN(std::string binary, SelfExecutable());
  DF_ASSIGN_OR_RETURN(std::unique_ptr<LocalServers> cluster,
                      LocalServers::Start(binary, o.ps, o.workers));
  for (const LocalServers::TaskInfo& t : cluster->tasks()) {
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
      out << absl::StrFormat("step %d  loss %.4f  weight %.4f  bias %.4f", p.step, p.loss, p.weight,
                             p.bias)
          << std::endl;
    }
  };

  if (flags.output == "text") {
    out << "training y = 2x + 10 (" << o.mode << ", " << o.workers << " workers, " << o.ps
        << " ps) for " << o.steps << " steps" << std::endl;
  }
  // While training runs, a task that dies or is frozen ends the job with an
  // error naming it: the rest of the cluster is killed at once, so no call
  // keeps waiting on the lost task.
  absl::Notification training_done;
  absl::Status lost_task;
  std::thread watcher([&] {
    while (!training_done.WaitForNotificationWithTimeout(kTaskCheckPeriod)) {
      absl::Status s = cluster->CheckTasks();
      if (!s.ok()) {
        lost_task = s;
        cluster->KillAll();
        return;
      }
    }
  });
  absl::StatusOr<TrainerResult> result =
      TrainLinearRegression(o, cluster->cluster_def(), on_progress, &g_stop);
  training_done.Notify();
  watcher.join();
  // Training that failed first, on a call to a task that had just died,
  // reports the task's fate as the cause.
  if (!result.ok() && lost_task.ok()) lost_task = cluster->CheckTasks();
  if (tty) out << std::endl;
  cluster->Stop();
  if (!lost_task.ok()) {
    return errors::Annotate(lost_task, "the demo's cluster lost a task, training stopped: ");
  }
  if (!result.ok()) return result.status();

  if (flags.output == "json") {
    nlohmann::ordered_json j{{"mode", result->mode}, {"steps", result->steps},
                             {"loss", result->loss}, {"weight", result->weight},
                             {"bias", result->bias}, {"seconds", result->seconds}};
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
