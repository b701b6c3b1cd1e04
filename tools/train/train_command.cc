#include "train/train_command.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "distflow/coordinator/cluster_coordinator.h"
#include "distflow/coordinator/parameter_server_strategy.h"
#include "distflow/core/status.h"
#include "distflow/distributed_runtime/rpc/grpc_auth.h"
#include "distflow/distributed_runtime/rpc/grpc_coordinator_service.h"
#include "distflow/monitoring/event_file.h"
#include "fashion_mnist/cluster_trainer.h"
#include "fashion_mnist/idx_files.h"
#include "nlohmann/json.hpp"
#include "train/chaos.h"
#include "launcher/local_servers.h"
#include "train/progress_line.h"
#include "train/train_status.h"

namespace distflow {

void AddTrainFlags(CLI::App* app, TrainFlags* flags) {
  fashion_mnist::TrainOptions& o = flags->options;
  app->add_option("--model", o.model, "mlp or cnn")->capture_default_str();
  app->add_option("--epochs", o.epochs, "passes over the training images")->capture_default_str();
  app->add_option("--batch-size", o.batch_size, "examples per step")->capture_default_str();
  app->add_option("--learning-rate", o.learning_rate, "Adam's (starting) learning rate")
      ->capture_default_str();
  app->add_option("--learning-rate-decay", o.learning_rate_decay,
                  "linear or cosine: the rate falls to 0 over the epochs, in a straight line or "
                  "along half a cosine; none")
      ->check(CLI::IsMember({"linear", "cosine", "none"}))
      ->capture_default_str();
  app->add_option("--data-dir", o.data_dir, "directory of the four Fashion-MNIST .gz IDX files")
      ->capture_default_str();
  app->add_option("--checkpoint-dir", o.checkpoint_dir,
                  "save after every epoch here; resume from the latest checkpoint");
  app->add_option("--export-saved-model", o.export_saved_model,
                  "after training, export the model as a SavedModel here (e.g. DIR/1; "
                  "serving_default and classify signatures; not with --min-shard-bytes)");
  app->add_option("--train-limit", o.train_limit, "train on the first N images only (0: all)")
      ->capture_default_str();
  app->add_option("--test-limit", o.test_limit, "evaluate on the first N test images (0: all)")
      ->capture_default_str();
  app->add_option("--seed", o.seed, "seed of the initial weights and the shuffle")
      ->capture_default_str();
  app->add_option("--progress-every", o.progress_every, "steps between progress lines")
      ->capture_default_str();
  app->add_option("--output", flags->output, "text or json")->capture_default_str();
  app->add_option("--ps", flags->ps,
                  "train on a local cluster with this many parameter servers (with --workers)")
      ->capture_default_str();
  app->add_option("--workers", flags->workers,
                  "train on a local cluster with this many workers (with --ps)")
      ->capture_default_str();
  app->add_option("--cluster", flags->cluster,
                  "train on these running servers: \"ps=host:port,...;worker=host:port,...\"");
  app->add_option("--steps-per-execution", flags->steps_per_execution,
                  "training steps one scheduled closure runs (cluster training)")
      ->capture_default_str();
  app->add_option("--max-inflight-closures", flags->max_inflight_closures,
                  "closures each worker runs at once (cluster training)")
      ->capture_default_str();
  app->add_option("--min-shard-bytes", flags->min_shard_bytes,
                  "split weights over the ps tasks in shards of at least this many bytes "
                  "(0: never)")
      ->capture_default_str();
  app->add_option("--kill-worker-every", flags->kill_worker_every,
                  "kill a random local worker every SECONDS and restart it (0: never)")
      ->capture_default_str();
  app->add_option("--chaos", flags->chaos,
                  "inject faults into the local cluster: FAULT:EVERY[/LASTING],... with "
                  "kill-worker, kill-ps (needs --checkpoint-dir) and partition-worker, e.g. "
                  "kill-worker:5s,kill-ps:20s,partition-worker:15s/3s");
  app->add_option("--call-timeout", flags->call_timeout,
                  "seconds a worker may take to answer a call before it counts as lost")
      ->capture_default_str();
  app->add_option("--worker-wait", flags->worker_wait,
                  "seconds the job waits while no worker is usable before it fails naming them")
      ->capture_default_str();
  app->add_option("--startup-deadline", flags->startup_deadline,
                  "seconds a worker that has never answered is awaited (saying why every 5 s) "
                  "before the job fails naming its task and address")
      ->capture_default_str();
  app->add_option("--checkpoint-every-steps", flags->checkpoint_every_steps,
                  "also checkpoint every N steps within an epoch (with --checkpoint-dir; 0: "
                  "never); a restored ps loses at most this many steps")
      ->capture_default_str();
  app->add_option("--checkpoint-every-seconds", flags->checkpoint_every_seconds,
                  "also checkpoint every SECONDS within an epoch (with --checkpoint-dir; 0: never)")
      ->capture_default_str();
  app->add_option("--ps-recovery-timeout", flags->ps_recovery_timeout,
                  "seconds a lost parameter server is awaited (then restored from the last "
                  "checkpoint when it came back empty) before the job fails naming it; 0: a lost "
                  "ps ends the job (default: 60 with --checkpoint-dir, else 0)");
  app->add_option("--accept-workers", flags->accept_workers,
                  "listen on HOST:PORT for servers started with --join grpc://HOST:PORT, which "
                  "become workers of the running job (port 0: a free one)");
  app->add_option("--server-log", flags->server_log,
                  "append the local servers' stderr to this file (default: discarded)");
  app->add_option("--status-port", flags->status_port,
                  "serve a live status page (/), its JSON (/api/status) and Prometheus metrics "
                  "(/metrics) on this port while training (0: a free one, printed)");
  app->add_option("--status-bind", flags->status_bind,
                  "address the status page listens on (loopback unless you say otherwise)")
      ->capture_default_str();
  app->add_option("--logdir", flags->logdir,
                  "write TensorBoard scalars (loss, accuracy, examples/s, test accuracy, workers "
                  "up) at every progress line to an event file in DIR (tensorboard --logdir DIR)");
}

namespace {

absl::Status CheckClusterFlags(const TrainFlags& f) {
  if (f.ps < 0 || f.workers < 0) {
    return errors::InvalidArgument("--ps and --workers must be >= 0");
  }
  if ((f.ps > 0) != (f.workers > 0)) {
    return errors::InvalidArgument("--ps and --workers go together, got --ps ", f.ps, " --workers ",
                                   f.workers);
  }
  if (f.min_shard_bytes > 0 && !f.options.export_saved_model.empty()) {
    return errors::InvalidArgument(
        "--export-saved-model exports whole weights; it does not go with --min-shard-bytes");
  }
  if (f.ps > 0 && !f.cluster.empty()) {
    return errors::InvalidArgument("give either --ps/--workers (a local cluster) or --cluster");
  }
  if (f.ps > 64 || f.workers > 64) {
    return errors::InvalidArgument("a local cluster has at most 64 ps and 64 workers");
  }
  if (!(f.kill_worker_every >= 0) || f.kill_worker_every > 86400) {
    return errors::InvalidArgument("--kill-worker-every must be in [0, 86400] seconds");
  }
  if (f.kill_worker_every > 0 && f.ps == 0) {
    return errors::InvalidArgument(
        "--kill-worker-every needs a local cluster (--ps and --workers): it restarts the workers "
        "it kills");
  }
  if (!f.chaos.empty()) {
    DF_ASSIGN_OR_RETURN(std::vector<ChaosFault> faults, ParseChaosSpec(f.chaos));
    if (f.ps == 0) {
      return errors::InvalidArgument(
          "--chaos needs a local cluster (--ps and --workers): it restarts the tasks it kills");
    }
    if (KillsPs(faults) && f.options.checkpoint_dir.empty()) {
      return errors::InvalidArgument(
          "--chaos kill-ps needs --checkpoint-dir: a restarted ps is restored from it");
    }
  }
  if (!(f.call_timeout > 0) || f.call_timeout > 86400) {
    return errors::InvalidArgument("--call-timeout must be in (0, 86400] seconds");
  }
  if (!(f.startup_deadline > 0) || f.startup_deadline > 86400) {
    return errors::InvalidArgument("--startup-deadline must be in (0, 86400] seconds");
  }
  if (!(f.worker_wait > 0) || f.worker_wait > 86400) {
    return errors::InvalidArgument("--worker-wait must be in (0, 86400] seconds");
  }
  if (f.min_shard_bytes < 0) return errors::InvalidArgument("--min-shard-bytes must be >= 0");
  if (f.max_inflight_closures < 1 || f.max_inflight_closures > kMaxInflightClosures) {
    return errors::InvalidArgument("--max-inflight-closures must be in [1, ", kMaxInflightClosures,
                                   "], got ", f.max_inflight_closures);
  }
  if (f.checkpoint_every_steps < 0 || !(f.checkpoint_every_seconds >= 0) ||
      f.checkpoint_every_seconds > 86400) {
    return errors::InvalidArgument(
        "--checkpoint-every-steps must be >= 0 and --checkpoint-every-seconds in [0, 86400]");
  }
  if ((f.checkpoint_every_steps > 0 || f.checkpoint_every_seconds > 0) &&
      f.options.checkpoint_dir.empty()) {
    return errors::InvalidArgument(
        "--checkpoint-every-steps and --checkpoint-every-seconds need --checkpoint-dir");
  }
  if (f.ps_recovery_timeout > 86400 || std::isnan(f.ps_recovery_timeout)) {
    return errors::InvalidArgument("--ps-recovery-timeout must be at most 86400 seconds");
  }
  return absl::OkStatus();
}

// The strategy the flags name; NotFound when they name no cluster (train
// in this process).
absl::StatusOr<ParameterServerStrategy> StrategyFromFlags(const TrainFlags& f,
                                                          LocalServers* local) {
  absl::StatusOr<ParameterServerStrategy> s = errors::NotFound("no cluster");
  if (local != nullptr) {
    s = ParameterServerStrategy::FromClusterDef(local->cluster_def());
  } else if (!f.cluster.empty()) {
    s = ParameterServerStrategy::FromFlag(f.cluster);
  } else if (const char* tf_config = std::getenv("TF_CONFIG");
             tf_config != nullptr && *tf_config != '\0') {
    s = ParameterServerStrategy::FromTfConfig(tf_config);
    if (!s.ok()) return errors::InvalidArgument("TF_CONFIG: ", s.status().message());
  }
  if (!s.ok()) return s.status();
  return s->WithMinShardBytes(f.min_shard_bytes);
}

// --logdir: scalars at every progress line. A failed write is reported once
// and ends the writing, never the training.
class ScalarLog {
 public:
  // Disabled for an empty `logdir`; the writer's errors otherwise.
  absl::Status Open(const std::string& logdir) {
    if (logdir.empty()) return absl::OkStatus();
    DF_ASSIGN_OR_RETURN(writer_, EventFileWriter::Open(logdir));
    return absl::OkStatus();
  }
  void Write(std::ostream& warn, int64_t step,
             const std::vector<std::pair<std::string, double>>& scalars) {
    if (writer_ == nullptr) return;
    absl::Status s = writer_->WriteScalars(step, scalars);
    if (!s.ok()) {
      warn << "warning: " << s.message() << "; no more TensorBoard scalars this run" << std::endl;
      writer_.reset();
    }
  }
  void Write(std::ostream& warn, const fashion_mnist::TrainProgress& p,
             std::vector<std::pair<std::string, double>> more = {}) {
    more.insert(more.begin(), {{"loss", p.loss},
                               {"accuracy", p.accuracy},
                               {"examples_per_second", p.examples_per_second}});
    Write(warn, p.step, more);
  }

 private:
  std::unique_ptr<EventFileWriter> writer_;
};

// The steps one epoch of `o` takes (batches of its training images).
absl::StatusOr<int64_t> StepsPerEpoch(const fashion_mnist::TrainOptions& o) {
  DF_ASSIGN_OR_RETURN(fashion_mnist::FashionMnistFiles files,
                      fashion_mnist::OpenFashionMnist(o.data_dir));
  const int64_t examples = fashion_mnist::TrainExamples(o, files);
  return (examples + o.batch_size - 1) / o.batch_size;
}

// Whether `out` is the process's stdout or stderr and that is a terminal
// (the progress line is then rewritten in place).
bool IsTerminal(const std::ostream& out) {
  if (&out == &std::cout) return isatty(STDOUT_FILENO) == 1;
  if (&out == &std::cerr) return isatty(STDERR_FILENO) == 1;
  return false;
}

// --status-port: the page, its JSON and /metrics, with the process's token
// (DISTFLOW_TOKEN_FILE) when there is one. The address is printed.
absl::StatusOr<std::unique_ptr<TrainStatus>> StartTrainStatus(const TrainFlags& flags,
                                                              std::ostream& progress) {
  const fashion_mnist::TrainOptions& o = flags.options;
  DF_ASSIGN_OR_RETURN(const int64_t steps_per_epoch, StepsPerEpoch(o));
  const int64_t total_steps = o.epochs * steps_per_epoch;
  auto status =
      std::make_unique<TrainStatus>(o.model, o.epochs, total_steps, flags.ps, flags.workers);
  StatusServerOptions so;
  so.bind = flags.status_bind;
  so.port = flags.status_port;
  so.token = ProcessToken();
  DF_RETURN_IF_ERROR(status->Serve(so));
  progress << "status page on http://" << flags.status_bind << ":" << status->port() << "/"
           << std::endl;
  return status;
}

absl::Status RunClusterTraining(const TrainFlags& flags, const ParameterServerStrategy& strategy,
                                LocalServers* local, ScalarLog* scalars, TrainStatus* status,
                                std::ostream& out, std::ostream& progress) {
  fashion_mnist::ClusterTrainOptions o;
  o.train = flags.options;
  DF_ASSIGN_OR_RETURN(const int64_t steps_per_epoch, StepsPerEpoch(o.train));
  ProgressLine line(progress, IsTerminal(progress), o.train.epochs, steps_per_epoch);
  o.train.on_resumed = [&line](const std::string& prefix, int64_t epoch) {
    line.Resumed(prefix, epoch);
  };
  o.train.on_checkpoint = [status](const std::string& prefix, int64_t step) {
    if (status != nullptr) status->ReportCheckpoint(prefix, step);
  };
  o.steps_per_execution = flags.steps_per_execution;
  o.max_inflight_closures = flags.max_inflight_closures;
  o.call_timeout = absl::Seconds(flags.call_timeout);
  o.worker_wait = absl::Seconds(flags.worker_wait);
  o.startup_deadline = absl::Seconds(flags.startup_deadline);
  o.checkpoint_every_steps = flags.checkpoint_every_steps;
  o.checkpoint_every = absl::Seconds(flags.checkpoint_every_seconds);
  const double ps_recovery_timeout =
      flags.ps_recovery_timeout >= 0
          ? flags.ps_recovery_timeout
          : (o.train.checkpoint_dir.empty() ? 0 : kDefaultPsRecoveryTimeoutSeconds);
  o.ps_recovery_timeout = absl::Seconds(ps_recovery_timeout);
  progress << "training on " << strategy.num_ps() << " ps and " << strategy.num_workers()
           << " workers, learning rate " << o.train.learning_rate;
  if (o.train.learning_rate_decay == "linear") progress << " falling linearly to 0";
  if (o.train.learning_rate_decay == "cosine") progress << " falling along a cosine to 0";
  progress << std::endl;
  // Servers that join (--join) are added to the coordinator while it runs.
  struct JoinTarget {
    absl::Mutex mu;
    ClusterCoordinator* coordinator ABSL_GUARDED_BY(mu) = nullptr;
  };
  auto join_target = std::make_shared<JoinTarget>();
  std::unique_ptr<GrpcCoordinatorListener> listener;
  if (!flags.accept_workers.empty()) {
    DF_ASSIGN_OR_RETURN(
        listener,
        GrpcCoordinatorListener::Start(
            flags.accept_workers,
            [join_target](const std::string& job, int task,
                          const std::string& address) -> absl::StatusOr<int> {
              absl::MutexLock l(&join_target->mu);
              if (join_target->coordinator == nullptr) {
                return errors::Unavailable("the coordinator is not running (yet, or any more)");
              }
              return join_target->coordinator->RegisterJoiningWorker(job, task, address);
            }));
    const size_t colon = flags.accept_workers.rfind(':');
    progress << "accepting workers on " << flags.accept_workers.substr(0, colon) << ":"
             << listener->bound_port() << std::endl;
  }
  o.on_coordinator = [join_target, status](ClusterCoordinator* c) {
    if (status != nullptr) status->SetCoordinator(c);
    absl::MutexLock l(&join_target->mu);
    join_target->coordinator = c;
  };
  std::unique_ptr<Chaos> chaos;
  if (local != nullptr && (flags.kill_worker_every > 0 || !flags.chaos.empty())) {
    std::vector<ChaosFault> faults;
    if (!flags.chaos.empty()) {
      DF_ASSIGN_OR_RETURN(faults, ParseChaosSpec(flags.chaos));
    }
    if (flags.kill_worker_every > 0) {
      faults.push_back(ChaosFault{ChaosFault::Kind::kKillWorker,
                                  absl::Seconds(flags.kill_worker_every), absl::Milliseconds(500)});
    }
    chaos = std::make_unique<Chaos>(local, std::move(faults),
                                    static_cast<uint64_t>(flags.options.seed));
  }
  auto on_progress = [&](const fashion_mnist::ClusterTrainProgress& p) {
    if (p.test_accuracy >= 0) {
      line.Break();
      scalars->Write(progress, p.train.step, {{"test_accuracy", p.test_accuracy}});
      if (status != nullptr) status->ReportEvaluation(p.train.epoch, p.train.step, p.test_accuracy);
      progress << absl::StrFormat(
                      "epoch %d done at step %d: loss %.4f, test accuracy %.4f; closures %d "
                      "(%d retried), worker failures %d, recoveries %d, ps failures %d, ps "
                      "recoveries %d",
                      p.train.epoch, p.train.step, p.train.loss, p.test_accuracy, p.counters.done,
                      p.counters.retried, p.counters.worker_failures, p.counters.recoveries,
                      p.counters.ps_failures, p.counters.ps_recoveries)
               << std::endl;
      return;
    }
    scalars->Write(progress, p.train, {{"workers_up", p.counters.workers_up}});
    if (status != nullptr) status->ReportProgress(p.train, static_cast<int>(o.train.batch_size));
    std::string extra = absl::StrFormat("workers up %d/%d", p.counters.workers_up, p.workers);
    if (p.counters.ps_failures > 0) {
      absl::StrAppend(&extra, absl::StrFormat(", ps failures %d, ps recoveries %d",
                                              p.counters.ps_failures, p.counters.ps_recoveries));
    }
    line.Update(p.train, extra);
  };
  absl::StatusOr<fashion_mnist::ClusterTrainResult> r =
      fashion_mnist::TrainOnCluster(strategy, o, on_progress);
  chaos.reset();
  line.Break();
  if (status != nullptr) {
    status->ReportDone(r.ok() ? "training done"
                              : absl::StrCat("training failed: ", r.status().message()));
  }
  if (!r.ok()) return r.status();
  const fashion_mnist::TrainResult& t = r->train;
  const CoordinatorCounters& c = r->counters;
  if (flags.output == "json") {
    nlohmann::ordered_json j = {{"model", t.model},
                                {"epochs", t.epochs},
                                {"steps", t.steps},
                                {"train_loss", t.train_loss},
                                {"test_accuracy", t.test_accuracy},
                                {"seconds", t.seconds},
                                {"examples_per_second", t.examples_per_second},
                                {"closures", c.done},
                                {"retried_closures", c.retried},
                                {"worker_failures", c.worker_failures},
                                {"recoveries", c.recoveries},
                                {"ps_failures", c.ps_failures},
                                {"ps_recoveries", c.ps_recoveries},
                                {"steps_lost", r->steps_lost},
                                {"checkpoints", r->checkpoints},
                                {"checkpoint_pause_max_ms", r->checkpoint_pause_max * 1000}};
    if (!t.exported_to.empty()) j["saved_model"] = t.exported_to;
    out << j.dump() << std::endl;
    return absl::OkStatus();
  }
  out << absl::StrFormat(
             "%s on %d ps + %d workers: %d epochs, %d steps, train loss %.4f, test accuracy "
             "%.4f on %d images, %.1f s, %.0f examples/s; %d closures (%d retried), %d worker "
             "failures, %d recoveries; %d ps failures, %d ps recoveries, %d steps lost",
             t.model, strategy.num_ps(), strategy.num_workers(), t.epochs, t.steps, t.train_loss,
             t.test_accuracy, t.test_examples, t.seconds, t.examples_per_second, c.done, c.retried,
             c.worker_failures, c.recoveries, c.ps_failures, c.ps_recoveries, r->steps_lost)
      << std::endl;
  if (!t.exported_to.empty()) out << "exported a SavedModel to " << t.exported_to << std::endl;
  return absl::OkStatus();
}

}  // namespace

absl::Status RunTrainCommand(const TrainFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.output != "text" && flags.output != "json") {
    return errors::InvalidArgument("--output must be text or json, got '", flags.output, "'");
  }
  DF_RETURN_IF_ERROR(CheckClusterFlags(flags));
  // Before any server starts: options the trainer would refuse cost nothing.
  DF_RETURN_IF_ERROR(fashion_mnist::CheckTrainOptions(flags.options));
  const bool json = flags.output == "json";
  std::ostream& progress_out = json ? err : out;
  // Before any server starts: a bad --logdir costs nothing.
  ScalarLog scalars;
  DF_RETURN_IF_ERROR(scalars.Open(flags.logdir));
  std::unique_ptr<TrainStatus> status;
  if (flags.status_port >= 0) {
    DF_ASSIGN_OR_RETURN(status, StartTrainStatus(flags, progress_out));
  }
  std::unique_ptr<LocalServers> local;
  if (flags.ps > 0) {
    DF_ASSIGN_OR_RETURN(std::string binary, SelfExecutable());
    DF_ASSIGN_OR_RETURN(local,
                        LocalServers::Start(binary, flags.ps, flags.workers, flags.server_log));
  }
  absl::StatusOr<ParameterServerStrategy> strategy = StrategyFromFlags(flags, local.get());
  if (strategy.ok()) {
    return RunClusterTraining(flags, *strategy, local.get(), &scalars, status.get(), out,
                              progress_out);
  }
  if (strategy.status().code() != absl::StatusCode::kNotFound) return strategy.status();
  fashion_mnist::TrainOptions options = flags.options;
  DF_ASSIGN_OR_RETURN(const int64_t steps_per_epoch, StepsPerEpoch(options));
  ProgressLine line(progress_out, IsTerminal(progress_out), options.epochs, steps_per_epoch);
  options.on_resumed = [&line](const std::string& prefix, int64_t epoch) {
    line.Resumed(prefix, epoch);
  };
  options.on_checkpoint = [&status](const std::string& prefix, int64_t step) {
    if (status != nullptr) status->ReportCheckpoint(prefix, step);
  };
  auto on_progress = [&](const fashion_mnist::TrainProgress& p) {
    scalars.Write(progress_out, p);
    if (status != nullptr) status->ReportProgress(p, static_cast<int>(flags.options.batch_size));
    line.Update(p);
  };
  absl::StatusOr<fashion_mnist::TrainResult> r = fashion_mnist::Train(options, on_progress);
  line.Break();
  if (!r.ok()) return r.status();
  scalars.Write(progress_out, r->steps, {{"test_accuracy", r->test_accuracy}});
  if (status != nullptr) {
    status->ReportEvaluation(r->epochs, r->steps, r->test_accuracy);
    status->ReportDone("training done");
  }
  if (json) {
    nlohmann::ordered_json j = {{"model", r->model},
                                {"epochs", r->epochs},
                                {"steps", r->steps},
                                {"train_loss", r->train_loss},
                                {"test_accuracy", r->test_accuracy},
                                {"seconds", r->seconds},
                                {"examples_per_second", r->examples_per_second}};
    if (!r->exported_to.empty()) j["saved_model"] = r->exported_to;
    out << j.dump() << std::endl;
  } else {
    out << absl::StrFormat(
               "%s: %d epochs, %d steps, train loss %.4f, test accuracy %.4f on %d images, "
               "%.1f s, %.0f examples/s",
               r->model, r->epochs, r->steps, r->train_loss, r->test_accuracy, r->test_examples,
               r->seconds, r->examples_per_second)
        << std::endl;
    if (!r->exported_to.empty()) out << "exported a SavedModel to " << r->exported_to << std::endl;
  }
  return absl::OkStatus();
}

}  // namespace distflow
