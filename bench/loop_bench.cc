// Cost of a loop iteration in the executor: `while i < n: i, s = i + 1,
// s + x` built with BuildWhileLoop (Enter, Merge, Less, LoopCond, Switch,
// Identity, two adds, NextIteration, Exit per variable: about 15 nodes an
// iteration), next to the same arithmetic unrolled into a straight chain of
// 2n adds in one graph. Both run through a ClientSession on one CPU device;
// "per_iteration" is wall time per loop iteration (per unrolled pair of
// adds), in seconds with an SI suffix ("2.1u" is 2.1 microseconds).
#include <vector>

#include "benchmark/benchmark.h"
#include "distflow/cc/client_session.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/cc/while_loop.h"

namespace distflow {
namespace {

void SetIterationCounter(benchmark::State& state, int64_t n) {
  state.counters["per_iteration"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}

void BM_WhileLoop(benchmark::State& state) {
  const int32_t n = static_cast<int32_t>(state.range(0));
  const int64_t parallel = state.range(1);
  Scope root = Scope::NewRootScope();
  auto limit = ops::Placeholder(root.WithOpName("n"), DT_INT32);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  OutputList out;
  absl::Status s = ops::BuildWhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, 0.0f), limit, x},
      [](const Scope& c, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(c, v[0], v[2]);
        return c.status();
      },
      [](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
        *next = {ops::AddV2(b, v[0], 1), ops::AddV2(b, v[1], v[3]), v[2], v[3]};
        return b.status();
      },
      "loop", &out, parallel);
  ClientSession session(root);
  if (!s.ok() || !session.status().ok()) {
    state.SkipWithError("building the loop failed");
    return;
  }
  std::vector<Tensor> got;
  for (auto _ : state) {
    if (!session.Run({{limit, n}, {x, 1.0f}}, {out[1]}, &got).ok()) {
      state.SkipWithError("run failed");
      return;
    }
  }
  if (got[0].scalar<float>() != static_cast<float>(n)) state.SkipWithError("wrong sum");
  SetIterationCounter(state, n);
}

void BM_Unrolled(benchmark::State& state) {
  const int32_t n = static_cast<int32_t>(state.range(0));
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output i = ops::Const(root, 0);
  Output sum = ops::Const(root, 0.0f);
  for (int32_t k = 0; k < n; ++k) {
    i = ops::AddV2(root, i, 1);
    sum = ops::AddV2(root, sum, x);
  }
  ClientSession session(root);
  if (!session.status().ok()) {
    state.SkipWithError("building the graph failed");
    return;
  }
  std::vector<Tensor> got;
  for (auto _ : state) {
    if (!session.Run({{x, 1.0f}}, {sum, i}, &got).ok()) {
      state.SkipWithError("run failed");
      return;
    }
  }
  if (got[0].scalar<float>() != static_cast<float>(n)) state.SkipWithError("wrong sum");
  SetIterationCounter(state, n);
}

BENCHMARK(BM_WhileLoop)->Args({1000, 1})->Args({1000, 10})->Args({100000, 10})->UseRealTime();
BENCHMARK(BM_Unrolled)->Arg(100)->Arg(1000)->UseRealTime();

}  // namespace
}  // namespace distflow

BENCHMARK_MAIN();
