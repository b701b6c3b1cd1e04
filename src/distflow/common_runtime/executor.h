// Executor: runs one partition graph (all nodes on one device) once per
// step. Building it creates every node's kernel and precomputes, per node,
// its input slots, its consumers and how many inputs it waits for; running
// it keeps, per step, only an atomic pending count and an input slot per
// edge. Nodes whose inputs are all available are ready: cheap ones run
// inline on the current thread, expensive ones go to the inter-op pool (the
// last expensive one stays on this thread when nothing cheap is left), and
// asynchronous kernels (e.g. _Recv) finish through a callback. A kernel is
// cheap when it says so (OpKernel::IsExpensive() is false) or when its
// measured run time, sampled in one step out of kCostSampleSteps, is
// estimated (executor_internal::FoldCostSample, which discounts runs made
// long by losing the core) under kExpensiveNanos: a hand-off to another
// thread costs more than that.
//
// The first error of a step — reported as "node 'x' (Op): <message>" with
// the kernel's status code — stops the step: no new node starts, the step's
// CancellationManager is cancelled (so the other executors of the step stop
// too) and its Rendezvous is aborted with the error (so no receiver waits
// forever). Cancellation from outside (e.g. a timeout) likewise stops the
// step, which then reports Cancelled.
//
// Every value carries a dead bit and the (frame, iteration) it belongs to.
// Conditionals (tf.cond's Switch and Merge): a node with a dead data or
// control input does not run and its outputs are dead (_Send/_Recv still run,
// to carry the deadness to other devices); a Merge runs once its control
// inputs are done and one data input is alive, forwarding the first live one,
// and is dead when every data input is (a loop's Merge, fed by a
// NextIteration, when its one input of the iteration is).
//
// Loops (tf.while_loop's Enter, Merge, Switch, LoopCond, NextIteration,
// Exit) run in frames, as TensorFlow's executor runs them: an Enter creates
// (or joins) the instance of its frame for the current iteration of the
// enclosing frame and feeds iteration 0, or every iteration when is_constant;
// a live NextIteration starts the next iteration, or waits while
// parallel_iterations iterations are alive; a dead NextIteration carries
// nothing; a live Exit hands its value to the enclosing frame, and a frame
// whose newest iteration's Exits are dead hands that deadness out when it
// ends. An iteration ends when none of its nodes or inner frames are pending
// and the one before it has ended; a frame ends with its last iteration once
// all its Enters have run, and its memory is reused or freed then, so a loop
// of any length runs in the memory of parallel_iterations iterations.
// _Send/_Recv in a loop use the frame and iteration in their rendezvous key:
// a frame instance's id is a stable hash of its parent's id, the parent's
// iteration and the frame's name, the same on every device and task. An
// error in a loop names the node, the frame and the iteration. Graphs
// without loops keep the lock-free path: frames cost them nothing.
//
// An Executor is immutable once built: RunAsync may be called concurrently
// for many steps.
#ifndef DISTFLOW_COMMON_RUNTIME_EXECUTOR_H_
#define DISTFLOW_COMMON_RUNTIME_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distflow/common_runtime/device.h"
#include "distflow/framework/call_frame.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/op_kernel.h"
#include "distflow/framework/rendezvous.h"
#include "distflow/graph/graph.h"

namespace distflow {

class StepStatsCollector;

class Executor {
 public:
  // Makes the kernel of one node. Sessions use it to share stateful kernels
  // between the executors of different run signatures.
  using CreateKernelFn = std::function<absl::StatusOr<std::shared_ptr<OpKernel>>(const NodeDef&)>;

  struct Params {
    // The device every node runs on. Not owned; must outlive the executor.
    Device* device = nullptr;
    // Defaults to creating each kernel from the global KernelRegistry.
    CreateKernelFn create_kernel;
  };

  // Builds the executor of `graph`. Errors name the node: a kernel that
  // cannot be built, a data input without an edge, malformed loops (see
  // BuildControlFlowInfo), a cycle not through a NextIteration.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(Params params,
                                                          std::unique_ptr<const Graph> graph);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  using Closure = std::function<void()>;
  using Runner = std::function<void(Closure)>;

  // What one step gives the executor. Pointers are borrowed and must stay
  // valid until the done callback has run.
  struct Args {
    int64_t step_id = 0;
    Rendezvous* rendezvous = nullptr;
    // The arguments and results of the graph's _Arg and _Retval nodes (see
    // framework/call_frame.h); may be null when it has none.
    CallFrame* call_frame = nullptr;
    CancellationManager* cancellation_manager = nullptr;
    // Per-node timings are recorded when set.
    StepStatsCollector* stats_collector = nullptr;
    // Runs a closure later on some other thread (the inter-op pool).
    // Required.
    Runner runner;
    // Run the step's cheap roots, and the cheap nodes they make ready, on
    // the calling thread before RunAsync returns, rather than handing them
    // to the runner: for a caller that would only wait for the step.
    bool inline_start = false;
    // The step fails with DeadlineExceeded when a loop starts an iteration
    // after this time: a caller whose thread runs an endless loop inline
    // (inline_start) is never free to cancel it.
    absl::Time deadline = absl::InfiniteFuture();
  };
  using DoneCallback = std::function<void(const absl::Status&)>;

  // Runs one step and calls `done` exactly once, when every node that was
  // started has finished, with OK or the step's first error (with
  // args.inline_start, possibly before RunAsync returns).
  void RunAsync(const Args& args, DoneCallback done) const;
  // Runs one step and waits for it.
  absl::Status Run(const Args& args) const;

  const Graph& graph() const { return *graph_; }
  Device* device() const { return device_; }

  // Steps between two that time the kernels which may be expensive.
  static constexpr uint64_t kCostSampleSteps = 8;
  // A kernel whose average run is shorter than this runs inline.
  static constexpr int64_t kExpensiveNanos = 1000;

 private:
  struct NodeItem;
  struct OutEdge;
  struct FrameInfo;
  struct IterationState;
  class StepState;
  enum class LoopRole : uint8_t { kNone, kEnter, kExit, kNextIteration };

  Executor() = default;
  absl::Status Initialize(const CreateKernelFn& create_kernel);
  // A cleared root-frame iteration state with fresh pending counts,
  // recycled when one is free.
  std::unique_ptr<IterationState> TakeIterationState() const;
  void RecycleIterationState(std::unique_ptr<IterationState> state) const;
  // Whether the node goes to the inter-op pool rather than running inline.
  bool IsExpensive(const NodeItem& item) const;
  // Folds one timed run of the node's kernel into its cost estimate.
  void RecordCost(const NodeItem& item, int64_t nanos) const;

  Device* device_ = nullptr;
  std::unique_ptr<const Graph> graph_;
  std::vector<std::shared_ptr<OpKernel>> kernels_;
  std::vector<NodeItem> items_;
  // Every node's input then output types, copied out of the kernels so the
  // per-node path reads them from one array (NodeItem points into it).
  std::vector<DataType> dtypes_;
  // The outputs of the Consts computed when the executor was built
  // (NodeItem::const_output points into it; reserved, never reallocated).
  std::vector<Tensor> const_outputs_;
  std::vector<OutEdge> out_edges_;
  std::vector<int32_t> control_out_;
  std::vector<int32_t> roots_;
  // frames_[0] is the root frame: every node when the graph has no loops.
  std::vector<FrameInfo> frames_;
  bool has_loops_ = false;
  // By node index: the kernel's estimated run time in ns (FoldCostSample
  // over sampled runs), kUnmeasured until its first sample. Relaxed atomics: a
  // lost update only delays the estimate.
  std::unique_ptr<std::atomic<int64_t>[]> cost_nanos_;
  // Steps started, to pick the ones that sample costs.
  mutable std::atomic<uint64_t> steps_started_{0};

  mutable absl::Mutex free_mu_;
  mutable std::vector<std::unique_ptr<IterationState>> free_iterations_ ABSL_GUARDED_BY(free_mu_);
};

// Joins the executors of one step: Get() hands out one callback per executor
// and `done` runs once, after all of them, with the step's error: the first
// error, unless a later one is a better cause (errors::IsBetterCause: an
// error of its own beats a derived echo, which beats a bare Cancelled).
// Thread-safe; deletes itself after calling `done`.
class ExecutorBarrier {
 public:
  // REQUIRES: num_executors >= 1.
  ExecutorBarrier(int num_executors, Executor::DoneCallback done);
  ExecutorBarrier(const ExecutorBarrier&) = delete;
  ExecutorBarrier& operator=(const ExecutorBarrier&) = delete;

  // Call exactly num_executors times.
  Executor::DoneCallback Get();

 private:
  ~ExecutorBarrier() = default;
  void WhenDone(const absl::Status& s);

  absl::Mutex mu_;
  int pending_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  Executor::DoneCallback done_;
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_EXECUTOR_H_
