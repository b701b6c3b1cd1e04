// Per-node cost of whole steps through ClientSession::Run on [1] float
// tensors, next to two floors measured in the same run:
//   chain:   y = AddV2(...AddV2(AddV2(x, one), one)..., one), N adds, fetch y
//   fan-out: y_i = AddV2(x, one) for i < N, fetch AddN(y_0..y_{N-1})
// `kernel loop` runs the same AddV2 kernel's Compute N times in a plain loop
// on this thread (what dispatching kernels costs without an executor or a
// session); `plain loop` is N float additions through a function pointer.
// Figures are ns per AddV2 (step time / N), medians of --reps steps.
//
//   session_bench [--nodes 10000] [--reps 31] [--graph chain|fan-out]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "distflow/cc/client_session.h"
#include "distflow/cc/const_op.h"
#include "distflow/cc/ops/standard_ops.h"
#include "distflow/cc/scope.h"
#include "distflow/common_runtime/cpu_device.h"
#include "distflow/common_runtime/device_mgr.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/op_registry.h"

namespace distflow {
namespace {

using Clock = std::chrono::steady_clock;

// Median ns per node of `step` over `reps` calls, after one warm-up call.
template <typename Step>
double NsPerNode(int nodes, int reps, Step step) {
  if (!step()) return -1;
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    if (!step()) return -1;
    times.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / nodes);
  }
  return bench::Median(times);
}

enum class Shape { kChain, kFanOut };

double SessionNsPerNode(Shape shape, int nodes, int reps) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto one = ops::Const(root.WithOpName("one"), {1.0f});
  Output y;
  if (shape == Shape::kChain) {
    y = x;
    for (int i = 0; i < nodes; ++i) y = ops::AddV2(root, y, one);
  } else {
    std::vector<Output> terms;
    terms.reserve(nodes);
    for (int i = 0; i < nodes; ++i) terms.push_back(ops::AddV2(root, x, one));
    y = ops::AddN(root, terms);
  }
  ClientSession session(root);
  if (!session.status().ok()) {
    std::fprintf(stderr, "session: %s\n", session.status().ToString().c_str());
    return -1;
  }
  const Tensor feed = Tensor::FromVector<float>({1.0f});
  std::vector<Tensor> out;
  return NsPerNode(nodes, reps, [&] {
    absl::Status s = session.Run({{x, feed}}, {y}, &out);
    if (!s.ok()) std::fprintf(stderr, "step: %s\n", s.ToString().c_str());
    return s.ok();
  });
}

// The AddV2 kernel's Compute called `nodes` times in a loop, each on the
// previous result (chain) or on the input (fan-out).
double KernelLoopNsPerNode(Shape shape, int nodes, int reps) {
  ConfigProto config;
  config.set_intra_op_parallelism_threads(1);
  DeviceMgr mgr(*CreateCpuDevices(config, "/job:localhost/replica:0/task:0"));
  Device* device = mgr.ListDevices()[0];
  NodeDef def;
  def.set_name("add");
  def.set_op("AddV2");
  def.add_input("x");
  def.add_input("one");
  AddNodeAttr("T", DT_FLOAT, &def);
  AddDefaultsToNodeDef(OpRegistry::Global()->LookUp("AddV2")->op_def, &def);
  auto kernel = KernelRegistry::Global()->CreateKernel(device, def);
  if (!kernel.ok()) return -1;
  const Tensor x = Tensor::FromVector<float>({1.0f});
  Tensor one = Tensor::FromVector<float>({1.0f});
  return NsPerNode(nodes, reps, [&] {
    Tensor prev = x;
    for (int i = 0; i < nodes; ++i) {
      Tensor in0 = shape == Shape::kChain ? std::move(prev) : x;
      TensorValue inputs[2] = {TensorValue(&in0), TensorValue(&one)};
      OpKernelContext::Params params;
      params.op_kernel = kernel->get();
      params.device = device;
      params.inputs = inputs;
      params.num_inputs = 2;
      OpKernelContext ctx(&params);
      (*kernel)->Compute(&ctx);
      if (!ctx.status().ok()) return false;
      prev = std::move(*ctx.mutable_output(0));
    }
    return prev.NumElements() == 1;
  });
}

float Add(float a, float b) { return a + b; }

double PlainLoopNsPerNode(int nodes, int reps) {
  float (*volatile add)(float, float) = Add;
  float sink = 0;
  const double ns = NsPerNode(nodes, reps, [&] {
    float y = 1.0f;
    for (int i = 0; i < nodes; ++i) y = add(y, 1.0f);
    sink += y;
    return true;
  });
  return sink > 0 ? ns : -1;
}

int Main(int argc, char** argv) {
  int nodes = 10000;
  int reps = 31;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--nodes") == 0) nodes = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--graph") == 0) only = argv[i + 1];
  }
  std::printf("ns per AddV2 on [1] float, %d nodes, medians of %d steps\n", nodes, reps);
  std::printf("%-8s %10s %12s %11s\n", "graph", "session", "kernel loop", "plain loop");
  for (Shape shape : {Shape::kChain, Shape::kFanOut}) {
    const char* name = shape == Shape::kChain ? "chain" : "fan-out";
    if (!only.empty() && only != name) continue;
    const double session = SessionNsPerNode(shape, nodes, reps);
    const double kernel = KernelLoopNsPerNode(shape, nodes, reps);
    const double plain = PlainLoopNsPerNode(nodes, reps);
    std::printf("%-8s %10.1f %12.1f %11.1f\n", name, session, kernel, plain);
  }
  return 0;
}

}  // namespace
}  // namespace distflow

int main(int argc, char** argv) { return distflow::Main(argc, argv); }
