// Per-node overhead of the executor: a chain and a wide fan-out of N trivial
// kernels (each forwards its input), run by Executor::Run, next to the same
// kernels' Compute called in a plain loop on one thread (the floor).
// BM_Executor* run every closure inline on the benchmark thread and report
// CPU time, so the figure is the executor's own work per node, immune to
// other load on the machine; BM_Executor*Pool hand the step to a one-thread
// inter-op pool, as a session does, and report wall time. The
// "per_node" counter is wall time per node per step, in seconds (printed
// with an SI suffix: "215n" is 215 ns).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "distflow/common_runtime/cpu_device.h"
#include "distflow/common_runtime/device_mgr.h"
#include "distflow/common_runtime/executor.h"
#include "distflow/core/threadpool.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/shape_inference.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {
namespace {

REGISTER_OP("BenchSource").Output("y: float").SetShapeFn(ScalarShape);
REGISTER_OP("BenchForward").Input("x: float").Output("y: float").SetShapeFn(UnchangedShape);

class BenchSourceOp : public OpKernel {
 public:
  explicit BenchSourceOp(OpKernelConstruction* ctx)
      : OpKernel(ctx), value_(Tensor::Scalar<float>(1.f)) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, value_); }

 private:
  Tensor value_;
};

class BenchForwardOp : public OpKernel {
 public:
  explicit BenchForwardOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override { ctx->forward_input_to_output(0, 0); }
};

REGISTER_KERNEL_BUILDER(Name("BenchSource").Device(kDeviceCpu), BenchSourceOp);
REGISTER_KERNEL_BUILDER(Name("BenchForward").Device(kDeviceCpu), BenchForwardOp);

enum class Shape { kChain, kFanOut };

GraphDef MakeGraph(Shape shape, int n) {
  GraphDef g;
  NodeDef* src = g.add_node();
  src->set_name("src");
  src->set_op("BenchSource");
  for (int i = 0; i < n; ++i) {
    NodeDef* node = g.add_node();
    node->set_name(absl::StrCat("n", i));
    node->set_op("BenchForward");
    node->add_input(shape == Shape::kChain && i > 0 ? absl::StrCat("n", i - 1) : "src");
  }
  return g;
}

struct Fixture {
  Fixture() : pool("bench_inter_op", 1) {
    ConfigProto config;
    config.set_intra_op_parallelism_threads(1);
    mgr = std::make_unique<DeviceMgr>(*CreateCpuDevices(config, "/job:localhost/replica:0/task:0"));
  }
  ThreadPool pool;
  std::unique_ptr<DeviceMgr> mgr;
};

Fixture* GetFixture() {
  static Fixture* f = new Fixture;
  return f;
}

void SetNodeCounter(benchmark::State& state, int n) {
  state.counters["per_node"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}

enum class Runner { kInline, kPool };

void RunExecutor(benchmark::State& state, Shape shape, Runner runner) {
  const int n = static_cast<int>(state.range(0));
  Fixture* f = GetFixture();
  auto graph = std::make_unique<Graph>();
  if (!ConvertGraphDefToGraph({}, MakeGraph(shape, n), graph.get()).ok()) {
    state.SkipWithError("graph import failed");
    return;
  }
  Executor::Params params;
  params.device = f->mgr->ListDevices()[0];
  auto exec = Executor::Create(std::move(params), std::move(graph));
  if (!exec.ok()) {
    state.SkipWithError(std::string(exec.status().message()).c_str());
    return;
  }
  Executor::Args args;
  if (runner == Runner::kPool) {
    args.runner = [f](Executor::Closure c) { f->pool.Schedule(std::move(c)); };
  } else {
    args.runner = [](Executor::Closure c) { c(); };
  }
  for (auto _ : state) {
    absl::Status s = (*exec)->Run(args);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  SetNodeCounter(state, n + 1);
}

// The floor: the same kernels' Compute, one after another on this thread.
void RunSequential(benchmark::State& state, Shape shape) {
  const int n = static_cast<int>(state.range(0));
  Fixture* f = GetFixture();
  Device* device = f->mgr->ListDevices()[0];
  GraphDef def = MakeGraph(shape, n);
  std::vector<std::unique_ptr<OpKernel>> kernels;
  for (NodeDef& node : *def.mutable_node()) {
    AddDefaultsToNodeDef(OpRegistry::Global()->LookUp(node.op())->op_def, &node);
    auto k = KernelRegistry::Global()->CreateKernel(device, node);
    if (!k.ok()) {
      state.SkipWithError(std::string(k.status().message()).c_str());
      return;
    }
    kernels.push_back(*std::move(k));
  }
  for (auto _ : state) {
    OpKernelContext::Params src_params;
    src_params.op_kernel = kernels[0].get();
    src_params.device = device;
    OpKernelContext src_ctx(&src_params);
    kernels[0]->Compute(&src_ctx);
    const Tensor src = *src_ctx.mutable_output(0);
    Tensor prev = src;
    for (int i = 1; i <= n; ++i) {
      TensorValue input(shape == Shape::kChain ? &prev : const_cast<Tensor*>(&src));
      OpKernelContext::Params params;
      params.op_kernel = kernels[i].get();
      params.device = device;
      params.inputs = &input;
      params.num_inputs = 1;
      OpKernelContext ctx(&params);
      kernels[i]->Compute(&ctx);
      prev = std::move(*ctx.mutable_output(0));
    }
    benchmark::DoNotOptimize(prev);
  }
  SetNodeCounter(state, n + 1);
}

void BM_ExecutorChain(benchmark::State& state) {
  RunExecutor(state, Shape::kChain, Runner::kInline);
}
void BM_ExecutorFanOut(benchmark::State& state) {
  RunExecutor(state, Shape::kFanOut, Runner::kInline);
}
void BM_ExecutorChainPool(benchmark::State& state) {
  RunExecutor(state, Shape::kChain, Runner::kPool);
}
void BM_ExecutorFanOutPool(benchmark::State& state) {
  RunExecutor(state, Shape::kFanOut, Runner::kPool);
}
void BM_SequentialChain(benchmark::State& state) { RunSequential(state, Shape::kChain); }
void BM_SequentialFanOut(benchmark::State& state) { RunSequential(state, Shape::kFanOut); }

BENCHMARK(BM_ExecutorChain)->Arg(1000)->Arg(10000);
BENCHMARK(BM_SequentialChain)->Arg(1000)->Arg(10000);
BENCHMARK(BM_ExecutorChainPool)->Arg(1000)->Arg(10000)->UseRealTime();
BENCHMARK(BM_ExecutorFanOut)->Arg(1000)->Arg(10000);
BENCHMARK(BM_SequentialFanOut)->Arg(1000)->Arg(10000);
BENCHMARK(BM_ExecutorFanOutPool)->Arg(1000)->Arg(10000)->UseRealTime();

}  // namespace
}  // namespace distflow

BENCHMARK_MAIN();
