// Times the MatMul kernel (built through the kernel registry, run on a CPU
// device whose intra-op pool has one thread per core) against Eigen's own
// GEMM (Eigen::MatrixXf product, single-threaded as Eigen is without
// OpenMP) on square float matrices, and against the kernel with no pool.
// Reports GFLOP/s (2 n^3 flops per product) as the rate counter "GFLOP".
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "benchmark/benchmark.h"
#include "distflow/core/threadpool.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"

namespace distflow {
namespace {

class BenchCpuDevice : public DeviceBase {
 public:
  // num_threads == 0: no intra-op pool.
  explicit BenchCpuDevice(int num_threads) {
    if (num_threads > 0) {
      pool_ = std::make_unique<ThreadPool>("bench_intra_op", num_threads);
    }
  }
  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  ThreadPool* intra_op_threadpool() const override { return pool_.get(); }

 private:
  std::string name_ = "/job:localhost/replica:0/task:0/device:CPU:0";
  std::string type_ = kDeviceCpu;
  std::unique_ptr<ThreadPool> pool_;
};

Tensor RandomMatrix(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t(DT_FLOAT, TensorShape({n, n}));
  for (float& v : t.flat<float>()) v = dist(gen);
  return t;
}

void SetFlopsCounter(benchmark::State& state, int64_t n) {
  state.counters["GFLOP"] =
      benchmark::Counter(2.0 * n * n * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void RunMatMulKernel(benchmark::State& state, int num_threads) {
  const int64_t n = state.range(0);
  BenchCpuDevice device(num_threads);
  NodeDef def;
  def.set_name("matmul");
  def.set_op("MatMul");
  // std::string, not const char*: GCC 12 warns wrongly (-Wrestrict) about
  // the inlined std::string::assign(const char*).
  def.add_input(std::string("a"));
  def.add_input(std::string("b"));
  AddNodeAttr("T", DT_FLOAT, &def);
  AddDefaultsToNodeDef(OpRegistry::Global()->LookUp("MatMul")->op_def, &def);
  auto kernel = KernelRegistry::Global()->CreateKernel(&device, def);
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  Tensor a = RandomMatrix(n, 1), b = RandomMatrix(n, 2);
  std::vector<TensorValue> inputs = {TensorValue(&a), TensorValue(&b)};
  OpKernelContext::Params params;
  params.op_kernel = kernel->get();
  params.device = &device;
  params.inputs = inputs.data();
  params.num_inputs = 2;
  for (auto _ : state) {
    OpKernelContext ctx(&params);
    (*kernel)->Compute(&ctx);
    if (!ctx.status().ok()) {
      state.SkipWithError(std::string(ctx.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(ctx.mutable_output(0)->raw_data());
  }
  SetFlopsCounter(state, n);
}

void BM_MatMulKernel(benchmark::State& state) { RunMatMulKernel(state, NumSchedulableCPUs()); }
void BM_MatMulKernelNoPool(benchmark::State& state) { RunMatMulKernel(state, 0); }

void BM_EigenGemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n);
  Eigen::MatrixXf b = Eigen::MatrixXf::Random(n, n);
  Eigen::MatrixXf c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  SetFlopsCounter(state, n);
}

BENCHMARK(BM_MatMulKernel)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EigenGemm)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MatMulKernelNoPool)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace distflow

BENCHMARK_MAIN();
