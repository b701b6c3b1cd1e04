// Training steps per second of `distflow demo`'s job (tools/demo/trainer.h:
// linear regression, async updates, 1 ps + 2 workers as server processes on
// loopback, each worker its own client), next to the floor measured on the
// same cluster in the same run: the same two clients running a step that
// does nothing (one Const on their own task) back to back. Prints medians of
// --reps runs.
//
//   train_steps_bench [--steps 2000] [--reps 5]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench_util.h"
#include "demo/trainer.h"
#include "distflow/common_runtime/session.h"
#include "launcher/local_servers.h"

namespace distflow {
namespace {

using Clock = std::chrono::steady_clock;

// Steps per second of the async job trained to `steps` global steps.
double TrainStepsPerSecond(const ClusterDef& cluster, int64_t steps) {
  TrainerOptions o;
  o.mode = "async";
  o.workers = 2;
  o.ps = 1;
  o.steps = steps;
  absl::StatusOr<TrainerResult> r = TrainLinearRegression(
      o, cluster, [](const TrainerProgress&) {}, nullptr);
  if (!r.ok()) {
    std::fprintf(stderr, "training failed: %s\n", r.status().ToString().c_str());
    return -1;
  }
  return static_cast<double>(r->updates) / r->seconds;
}

// Steps per second of two clients, one per worker, each running `steps`
// one-Const steps on its own task.
double EmptyStepsPerSecond(const LocalServers& cluster, int64_t steps) {
  std::vector<std::unique_ptr<Session>> sessions;
  for (int w = 0; w < 2; ++w) {
    SessionOptions opts;
    opts.target = absl::StrCat("grpc://", cluster.cluster_def().job(1).tasks().at(w));
    *opts.config.mutable_cluster_def() = cluster.cluster_def();
    absl::StatusOr<std::unique_ptr<Session>> s = NewSession(opts);
    if (!s.ok()) return -1;
    if (!(*s)->Create(bench::OneConstGraph(absl::StrCat("/job:worker/task:", w))).ok()) {
      return -1;
    }
    std::vector<Tensor> out;
    if (!(*s)->Run({}, {"c"}, {}, &out).ok()) return -1;
    sessions.push_back(*std::move(s));
  }
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (auto& s : sessions) {
    threads.emplace_back([&s, steps] {
      std::vector<Tensor> out;
      for (int64_t i = 0; i < steps; ++i) s->Run({}, {"c"}, {}, &out).IgnoreError();
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  for (auto& s : sessions) s->Close().IgnoreError();
  return 2.0 * static_cast<double>(steps) / seconds;
}

int Main(int argc, char** argv) {
  int64_t steps = 2000;
  int reps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  absl::StatusOr<std::unique_ptr<LocalServers>> cluster =
      LocalServers::Start(DISTFLOW_BINARY, 1, 2);
  if (!cluster.ok()) {
    std::fprintf(stderr, "%s\n", cluster.status().ToString().c_str());
    return 1;
  }
  std::vector<double> train, empty;
  for (int r = 0; r < reps; ++r) {
    train.push_back(TrainStepsPerSecond((*cluster)->cluster_def(), steps));
    empty.push_back(EmptyStepsPerSecond(**cluster, steps / 2));
  }
  std::printf("async training, 1 ps + 2 workers, %lld steps, medians of %d runs\n",
              static_cast<long long>(steps), reps);
  std::printf("training: %.0f steps/s   floor (empty steps, same clients): %.0f steps/s\n",
              bench::Median(train), bench::Median(empty));
  return 0;
}

}  // namespace
}  // namespace distflow

int main(int argc, char** argv) { return distflow::Main(argc, argv); }
