// Closures per second through the ClusterCoordinator, for a trivial function
// (y = 2x on the worker) and for one that updates a variable on the ps, with
// 1 and 2 `distflow server` workers and 1, 4 and 16 closures in flight per
// worker (CoordinatorOptions::max_inflight_closures; 1 is one closure at a
// time, as before that option); next to the floor of the same trivial step
// run back to back from one thread through a plain session. Prints the
// median of --reps runs and the runs; each rep runs every row once.
//
//   coordinator_bench [--closures 2000] [--reps 3] [--inflight 1,4,16]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "distflow/common_runtime/session.h"
#include "distflow/coordinator/cluster_coordinator.h"
#include "distflow/distributed_runtime/cluster_spec.h"
#include "distflow/graph/graph_io.h"
#include "server_process.h"

namespace distflow {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kGraph[] = R"pb(
  node {
    name: "v"
    op: "VarHandleOp"
    device: "/job:ps/replica:0/task:0"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value { shape {} }
    }
    attr {
      key: "shared_name"
      value { s: "v" }
    }
  }
  node {
    name: "one"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape {}
          float_val: 1
        }
      }
    }
  }
  node {
    name: "init"
    op: "AssignVariableOp"
    input: "v"
    input: "one"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "inc"
    op: "AssignAddVariableOp"
    input: "v"
    input: "one"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
  }
  node {
    name: "x"
    op: "Placeholder"
    attr {
      key: "dtype"
      value { type: DT_FLOAT }
    }
    attr {
      key: "shape"
      value { shape {} }
    }
  }
  node {
    name: "y"
    op: "Mul"
    input: "x"
    input: "one"
    attr {
      key: "T"
      value { type: DT_FLOAT }
    }
  }
)pb";

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Tensor Scalar(float v) { return Tensor::FromVector<float>({v}, TensorShape({})); }

// Closures per second with `num_workers` workers running `inflight`
// closures each at once; -1 on error.
double ClosuresPerSecond(int num_workers, int inflight, bool update_ps, int closures) {
  auto ps = ServerProcess::Start("ps=127.0.0.1:0", "ps", 0);
  std::string worker_flag = "worker=127.0.0.1:0";
  for (int i = 1; i < num_workers; ++i) worker_flag += ",127.0.0.1:0";
  std::vector<std::unique_ptr<ServerProcess>> workers;
  std::string cluster = absl::StrCat("ps=", ps ? ps->address() : "", ";worker=");
  for (int i = 0; i < num_workers; ++i) {
    workers.push_back(ServerProcess::Start(worker_flag, "worker", i));
    if (workers.back() == nullptr || ps == nullptr) return -1;
    absl::StrAppend(&cluster, i ? "," : "", workers.back()->address());
  }
  CoordinatorOptions o;
  o.cluster = ClusterSpec::FromFlag(cluster)->def();
  o.max_inflight_closures = inflight;
  auto coord = ClusterCoordinator::Create(o);
  if (!coord.ok()) return -1;
  WorkerFunction init;
  if (!ParseGraphDefText(kGraph, &init.graph).ok()) return -1;
  init.targets = {"init"};
  const int init_fn = *(*coord)->RegisterFunction(std::move(init));
  const int step = *(*coord)->RegisterFunction(
      {GraphDef(),
       {"x"},
       {"y"},
       update_ps ? std::vector<std::string>{"inc"} : std::vector<std::string>{}});
  for (int w = 0; w < num_workers; ++w) {
    // Warm: the session and the step's client graph on every worker.
    absl::StatusOr<std::vector<Tensor>> r = (*coord)->RunOnWorker(init_fn, w, {});
    for (int tries = 0; !r.ok() && tries < 50; ++tries) r = (*coord)->RunOnWorker(init_fn, w, {});
    if (!r.ok() || !(*coord)->RunOnWorker(step, w, {Scalar(1)}).ok()) return -1;
  }
  const auto start = Clock::now();
  for (int i = 0; i < closures; ++i) {
    if (!(*coord)->Schedule(step, {Scalar(static_cast<float>(i))}).ok()) return -1;
  }
  if (!(*coord)->Join(absl::Minutes(5)).ok()) return -1;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return closures / seconds;
}

// The same trivial step back to back through one session on one worker.
double SequentialStepsPerSecond(int steps) {
  auto ps = ServerProcess::Start("ps=127.0.0.1:0", "ps", 0);
  auto worker = ServerProcess::Start("worker=127.0.0.1:0", "worker", 0);
  if (ps == nullptr || worker == nullptr) return -1;
  SessionOptions so;
  so.target = absl::StrCat("grpc://", worker->address());
  *so.config.mutable_cluster_def() =
      ClusterSpec::FromFlag(absl::StrCat("ps=", ps->address(), ";worker=", worker->address()))
          ->def();
  auto session = NewSession(so);
  GraphDef g;
  if (!session.ok() || !ParseGraphDefText(kGraph, &g).ok() || !(*session)->Create(g).ok()) {
    return -1;
  }
  std::vector<Tensor> out;
  if (!(*session)->Run({{"x", Scalar(1)}}, {"y"}, {}, &out).ok()) return -1;
  const auto start = Clock::now();
  for (int i = 0; i < steps; ++i) {
    if (!(*session)->Run({{"x", Scalar(static_cast<float>(i))}}, {"y"}, {}, &out).ok()) return -1;
  }
  return steps / std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace
}  // namespace distflow

int main(int argc, char** argv) {
  int closures = 2000, reps = 3;
  std::vector<int> inflight = {1, 4, 16};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--closures") == 0) (void)absl::SimpleAtoi(argv[i + 1], &closures);
    if (std::strcmp(argv[i], "--reps") == 0) (void)absl::SimpleAtoi(argv[i + 1], &reps);
    if (std::strcmp(argv[i], "--inflight") == 0) {
      inflight.clear();
      for (absl::string_view part : absl::StrSplit(argv[i + 1], ',')) {
        int n = 0;
        if (!absl::SimpleAtoi(part, &n) || n < 1 || n > distflow::kMaxInflightClosures) {
          std::fprintf(stderr, "--inflight takes numbers in [1, %d], got '%s'\n",
                       distflow::kMaxInflightClosures, argv[i + 1]);
          return 2;
        }
        inflight.push_back(n);
      }
    }
  }
  if (closures < 1 || reps < 1 || inflight.empty()) {
    std::fprintf(stderr, "--closures and --reps must be positive\n");
    return 2;
  }
  // Each rep runs every row once, so a change of load on the machine
  // reaches every row alike, the in-flight-1 baseline included.
  struct Row {
    std::string name;
    std::function<double()> fn;
    std::vector<double> results;
  };
  std::vector<Row> rows;
  rows.push_back({"floor: one session, trivial step back to back, steps/s",
                  [&] { return distflow::SequentialStepsPerSecond(closures); }});
  for (bool update_ps : {false, true}) {
    for (int workers : {1, 2}) {
      for (int n : inflight) {
        rows.push_back(
            {absl::StrFormat("coordinator, %d worker(s), %2d in flight each, %s, closures/s",
                             workers, n,
                             update_ps ? "variable update on the ps" : "trivial function"),
             [=] { return distflow::ClosuresPerSecond(workers, n, update_ps, closures); }});
      }
    }
  }
  for (int r = 0; r < reps; ++r) {
    for (Row& row : rows) row.results.push_back(row.fn());
  }
  for (const Row& row : rows) {
    std::string all;
    for (double v : row.results)
      absl::StrAppend(&all, all.empty() ? "" : " ", absl::StrFormat("%.0f", v));
    std::printf("%s: %.0f (runs: %s)\n", row.name.c_str(), distflow::Median(row.results),
                all.c_str());
  }
  return 0;
}
