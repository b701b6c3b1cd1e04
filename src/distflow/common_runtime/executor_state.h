// Internal to the executor (executor.cc, executor_build.cc,
// executor_frames.cc); not part of the installed API. What building an
// Executor computes once per node and per loop frame (NodeItem, OutEdge,
// FrameInfo), the per-iteration slots and pending counts a step fills
// (IterationState), and the step itself (Executor::StepState): its runner in
// executor.cc, its loop frames and iterations in executor_frames.cc.
#ifndef DISTFLOW_COMMON_RUNTIME_EXECUTOR_STATE_H_
#define DISTFLOW_COMMON_RUNTIME_EXECUTOR_STATE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/executor.h"
#include "distflow/common_runtime/step_stats_collector.h"
#include "distflow/framework/node_def_util.h"

namespace distflow {

// Everything about a node that the hot path needs, computed once. The fields
// a trivial node reads while it runs come first, within one cache line.
struct Executor::NodeItem {
  OpKernel* kernel = nullptr;
  // Into Executor::dtypes_: num_inputs, then num_outputs types.
  const DataType* input_types = nullptr;
  const DataType* output_types = nullptr;
  int32_t num_inputs = 0;
  int32_t num_outputs = 0;
  // Index of input 0 in an iteration's input slots of the node's frame;
  // inputs are contiguous.
  int32_t input_start = 0;
  // Index of the node's pending count in an iteration of its frame.
  int32_t pending_index = 0;
  // Edges from other op nodes (data and control) the node waits for.
  int32_t num_pending = 0;
  // [begin, end) ranges in out_edges_ and control_out_.
  int32_t out_edge_begin = 0, out_edge_end = 0;
  int32_t control_begin = 0, control_end = 0;
  LoopRole loop_role = LoopRole::kNone;
  bool is_async = false;
  // The kernel's hint (OpKernel::IsExpensive): a node without it always runs
  // inline; one with it is timed and runs inline once it proves cheap (see
  // Executor::IsExpensive).
  bool may_be_expensive = false;
  // _Send/_Recv run even when dead, to carry the deadness across devices.
  bool is_transfer = false;
  // For _Recv, Switch and _SwitchN an output left unset is dead rather than an
  // error.
  bool unset_output_is_dead = false;
  // A Merge waits for its control inputs and then for the first live data
  // input, or for every data input to be dead (see kMergeLiveShift).
  bool is_merge = false;
  // Some input is a ref type (its slot may hold a ref into a variable).
  bool has_ref_input = false;
  bool is_constant_enter = false;
  const Node* node = nullptr;
  // A Const in a graph without loops: its output, computed once when the
  // executor is built (sharing the kernel's buffer, so the buffer's count
  // stays above one and no consumer writes into it). Consumers read it in
  // place and the kernel does not run again. Null otherwise.
  const Tensor* const_output = nullptr;
  // The frame the node runs in (an Enter runs in the frame around the one it
  // enters), and for an Enter the frame it enters.
  int32_t frame = 0;
  int32_t child_frame = -1;
  // Dead data inputs that make a Merge dead: all of them, or one for a loop's
  // Merge (fed by a NextIteration), which gets one input per iteration.
  int32_t merge_dead_needed = 0;
};

struct Executor::OutEdge {
  int32_t dst;         // consumer's index in items_
  int32_t src_output;  // producer's output slot
  int32_t dst_slot;    // consumer's input slot in its frame's iterations
  bool is_last_use;    // the last edge reading src_output may move the value
};

// The layout of one loop frame's iterations, and what the frame needs to run.
struct Executor::FrameInfo {
  std::string name;
  // Mixed into the frame ids of the frame's instances; the same in every
  // process, so both ends of a _Send/_Recv pair compute the same key.
  uint64_t name_hash = 0;
  int32_t parent = -1;
  int64_t parallel_iterations = 1;
  // The frame's Enter nodes in this graph: an instance of the frame has
  // received all its inputs when that many have run.
  int32_t num_enters = 0;
  int32_t num_nodes = 0;
  int32_t total_inputs = 0;
  // By pending_index: each node's pending count at the start of an iteration.
  std::vector<uint64_t> initial_pending;
};

namespace executor_internal {

// Pending counts pack two counters in one atomic word: the inputs still
// missing (low half) and the dead inputs seen (high half), so one atomic
// add updates both.
constexpr uint64_t kPendingMask = 0xffffffffu;
constexpr uint64_t kDeadInput = uint64_t{1} << 32;

// A Merge's pending word is laid out differently from other nodes': the low
// half counts its control inputs plus one slot for "a live data input came or
// every data input was dead"; bits 32-47 count dead data inputs; bits 48-63
// hold 1 + the index of the first live data input (0 while none came).
constexpr uint64_t kMergeLiveShift = 48;
constexpr uint64_t kMergeDeadMask = 0xffffu;

inline int MergeLiveInput(uint64_t pending) {
  return static_cast<int>(pending >> kMergeLiveShift) - 1;
}

inline std::string NodePrefix(const Node& n) {
  return absl::StrCat(FormatNodeForError(n.def()), ": ");
}

// 64-bit FNV-1a: stable across processes and builds, unlike absl::Hash.
inline uint64_t StableHash(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// A kernel's cost estimate before its first sample.
constexpr int64_t kUnmeasured = std::numeric_limits<int64_t>::max();

// A kernel's cost estimate (ns) after one more timed run of `sample` ns.
// A wall-clock sample is the kernel's cost plus whatever took its core
// meanwhile (an interrupt, a thread of another process on a busy machine),
// so noise only ever lengthens it: the estimate falls halfway to a shorter
// sample at once and rises towards a longer one by an eighth of the gap,
// capped at 4x the estimate plus `rise_floor`. A kernel that really costs
// more is there within a few samples; one preempted run moves a cheap
// kernel's estimate by under half the cap.
constexpr int64_t FoldCostSample(int64_t old, int64_t sample, int64_t rise_floor) {
  if (old == kUnmeasured) return sample;
  if (sample <= old) return old - (old - sample) / 2;
  const int64_t capped = sample < 4 * old + rise_floor ? sample : 4 * old + rise_floor;
  return old + (capped - old) / 8;
}

}  // namespace executor_internal

// The values and pending counts of one iteration of one frame. A step that
// ends without error leaves every entry of the root frame's iteration
// cleared, so its state is recycled for the next step, which only resets the
// pending counts. Iterations of loop frames are cleared when they end and
// recycled within their frame.
struct Executor::IterationState {
  // One input slot of a consumer.
  struct Entry {
    Tensor value;
    // Instead of `value`: a Const's output (NodeItem::const_output), read
    // in place.
    const Tensor* const_value = nullptr;
    // A ref input (into a variable's storage) when ref_mu is set.
    Tensor* ref = nullptr;
    absl::Mutex* ref_mu = nullptr;
    bool is_dead = false;
  };

  explicit IterationState(const FrameInfo& frame)
      : entries(new Entry[frame.total_inputs]),
        pending(new std::atomic<uint64_t>[frame.num_nodes]) {}
  void Reset(const FrameInfo& frame, int64_t iteration) {
    for (int32_t i = 0; i < frame.num_nodes; ++i) {
      pending[i].store(frame.initial_pending[i], std::memory_order_relaxed);
    }
    iter = iteration;
    outstanding_ops = 0;
    outstanding_frames = 0;
  }
  void ClearEntries(const FrameInfo& frame) {
    for (int32_t i = 0; i < frame.total_inputs; ++i) entries[i] = Entry();
  }

  std::unique_ptr<Entry[]> entries;
  std::unique_ptr<std::atomic<uint64_t>[]> pending;
  int64_t iter = 0;
  // Loop frames only, under the frame's mutex: nodes of this iteration ready
  // or running, and child frames entered from it that are still alive.
  int64_t outstanding_ops = 0;
  int64_t outstanding_frames = 0;
};

// The state of one step of one executor. Deletes itself when the step ends.
class Executor::StepState {
 public:
  StepState(const Executor* exec, const Args& args, DoneCallback done);
  void RunAsync();

 private:
  using Entry = IterationState::Entry;
  // One instance of a frame: the root frame, or a loop frame entered in one
  // iteration of its parent. The fields above `mu` are set when the instance
  // is created and never change. The root frame keeps its one iteration in
  // StepState::root_iter_ and uses none of the fields under `mu`.
  struct FrameState {
    const FrameInfo* info = nullptr;
    uint64_t frame_id = 0;
    FrameState* parent = nullptr;
    IterationState* parent_iter = nullptr;
    // The key of this frame in frames_.
    std::tuple<const FrameState*, int64_t, int32_t> key;

    absl::Mutex mu;
    // Live iterations first_iter .. iteration_count, oldest first; an
    // iteration ends only after the one before it.
    std::deque<std::unique_ptr<IterationState>> iterations ABSL_GUARDED_BY(mu);
    int64_t first_iter ABSL_GUARDED_BY(mu) = 0;
    int64_t iteration_count ABSL_GUARDED_BY(mu) = 0;
    int32_t num_pending_inputs ABSL_GUARDED_BY(mu) = 0;
    // NextIteration values waiting for a free iteration (parallel_iterations
    // are alive), constant Enter values every iteration sees, and dead Exits
    // of the newest iteration (their deadness leaves the loop when it ends).
    std::vector<std::pair<const NodeItem*, Entry>> next_iter_roots ABSL_GUARDED_BY(mu);
    std::vector<std::pair<const NodeItem*, Entry>> loop_invariants ABSL_GUARDED_BY(mu);
    std::vector<const NodeItem*> dead_exits ABSL_GUARDED_BY(mu);
    std::vector<std::unique_ptr<IterationState>> free_iterations ABSL_GUARDED_BY(mu);

    IterationState* iteration(int64_t i) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return iterations[i - first_iter].get();
    }
    bool is_root() const { return parent == nullptr; }
  };
  struct TaggedNode {
    const NodeItem* item;
    FrameState* frame;
    IterationState* iter;
    bool is_dead;
  };
  using TaggedNodeSeq = absl::InlinedVector<TaggedNode, 8>;
  // FIFO of nodes this thread runs next. The nodes the running node makes
  // ready are collected in output(); when the queue is empty they become the
  // queue by switching buffers, so a chain's nodes are never copied.
  class ReadyQueue {
   public:
    explicit ReadyQueue(TaggedNodeSeq* nodes) { bufs_[cur_].swap(*nodes); }
    bool empty() const { return head_ == bufs_[cur_].size(); }
    TaggedNodeSeq* output() { return &bufs_[1 - cur_]; }
    void push_back(const TaggedNode& t) {
      if (empty()) Reset();
      bufs_[cur_].push_back(t);
    }
    // Valid until the next push_back or TakeAll.
    const TaggedNode& pop_front() { return bufs_[cur_][head_++]; }
    // Takes every node of `ready`: output()'s by switching buffers, another
    // sequence's by swapping. REQUIRES: empty().
    void TakeAll(TaggedNodeSeq* ready) {
      Reset();
      if (ready == output()) {
        cur_ = 1 - cur_;
        return;
      }
      bufs_[cur_].swap(*ready);
      ready->clear();
    }

   private:
    void Reset() {
      bufs_[cur_].clear();
      head_ = 0;
    }
    TaggedNodeSeq bufs_[2];
    int cur_ = 0;
    size_t head_ = 0;
  };
  using InputVector = absl::InlinedVector<TensorValue, 8>;
  struct AsyncState;
  // The async kernel whose ComputeAsync this thread is in, and the queue of
  // the Process loop that called it.
  struct InlineAsyncCall {
    const AsyncState* state = nullptr;
    ReadyQueue* queue = nullptr;
  };
  static thread_local InlineAsyncCall inline_async_call_;
  // Process loops running on this thread (of any step).
  static thread_local int process_depth_;
  // What an asynchronous kernel needs until its callback runs.
  struct AsyncState {
    AsyncState(const OpKernelContext::Params& p, const TaggedNode& t, InputVector in,
               std::unique_ptr<NodeStatsRecorder> r)
        : inputs(std::move(in)), params(p), tagged(t), rec(std::move(r)), ctx(&params) {
      params.inputs = inputs.data();
    }
    InputVector inputs;
    OpKernelContext::Params params;
    TaggedNode tagged;
    std::unique_ptr<NodeStatsRecorder> rec;
    OpKernelContext ctx;
  };

  // Runs `nodes` and the cheap nodes they make ready on this thread.
  void Process(TaggedNodeSeq nodes, int64_t scheduled_micros);
  // `inline_ready` is the queue of the Process loop that started the kernel
  // when the callback runs inside its ComputeAsync, else null.
  void AsyncDone(AsyncState* state, ReadyQueue* inline_ready);
  absl::Status PrepareInputs(const NodeItem& item, IterationState* iter, InputVector* inputs,
                             bool* is_input_dead);
  void ClearInputs(const NodeItem& item, IterationState* iter);
  // Checks the kernel's outputs and hands them to the consumers.
  absl::Status ProcessOutputs(const TaggedNode& tagged, OpKernelContext* ctx, TaggedNodeSeq* ready);
  // ctx is null for a dead node: every output is dead.
  void PropagateOutputs(const TaggedNode& tagged, OpKernelContext* ctx, TaggedNodeSeq* ready);
  // Writes the consumers' input slots in `iter` and activates them;
  // `set_input(edge, &slot)` stores one edge's value and returns whether it
  // is dead. For a loop frame REQUIRES frame->mu.
  template <typename SetInput>
  void ActivateEdges(const NodeItem& item, bool node_dead, FrameState* frame, IterationState* iter,
                     TaggedNodeSeq* ready, SetInput set_input);
  void ActivateFromContext(const NodeItem& item, OpKernelContext* ctx, bool node_dead,
                           FrameState* frame, IterationState* iter, TaggedNodeSeq* ready);
  // Every out edge of `item` (a one-output loop node) carries `value`.
  void ActivateFromEntry(const NodeItem& item, const Entry& value, FrameState* frame,
                         IterationState* iter, TaggedNodeSeq* ready);
  // Memory the next nodes will touch, requested while this one runs: the
  // consumers' items, and the kernel of a node that became ready (its vtable
  // and the output types its context is sized by).
  void PrefetchConsumers(const NodeItem& item) const;
  static void PushReady(const NodeItem& item, FrameState* frame, IterationState* iter, bool dead,
                        TaggedNodeSeq* ready) {
    __builtin_prefetch(item.kernel);
    __builtin_prefetch(&item.kernel->output_types());
    // Field by field: a TaggedNode built whole on the stack and copied in
    // makes the CPU wait for its partial stores (a store-forwarding stall).
    TaggedNode& t = ready->emplace_back();
    t.item = &item;
    t.frame = frame;
    t.iter = iter;
    t.is_dead = dead;
  }
  // `slot` is the input slot a data edge feeds, -1 for a control edge (only
  // a Merge needs to know which input it is).
  void ActivateNode(int32_t dst, int32_t slot, bool dead, FrameState* frame, IterationState* iter,
                    TaggedNodeSeq* ready);
  void ActivateMerge(int32_t dst, int32_t slot, bool dead, FrameState* frame, IterationState* iter,
                     TaggedNodeSeq* ready);

  // Loops. PropagateLoopOutputs moves a node's outputs within and between
  // frames and then releases the node's hold on its iteration; the rest keep
  // the frames' books.
  void PropagateLoopOutputs(const TaggedNode& tagged, OpKernelContext* ctx, TaggedNodeSeq* ready);
  static Entry TakeOutput(OpKernelContext* ctx);
  FrameState* FindOrCreateChildFrame(FrameState* frame, IterationState* iter,
                                     const NodeItem& enter);
  std::unique_ptr<IterationState> TakeLoopIterationLocked(FrameState* frame, int64_t iteration)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu);
  void IncrementIterationLocked(FrameState* frame, TaggedNodeSeq* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu);
  // Ends finished iterations from `iteration` on; true iff the frame is done.
  bool CleanupIterationsLocked(FrameState* frame, int64_t iteration, TaggedNodeSeq* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu);
  void DecrementOutstandingOps(FrameState* frame, IterationState* iter, TaggedNodeSeq* ready);
  // Deletes a finished frame, then its parent when that finishes too.
  void DeleteFrame(FrameState* frame, TaggedNodeSeq* ready);

  int32_t item_index(const NodeItem& item) const {
    return static_cast<int32_t>(&item - exec_->items_.data());
  }
  // Accounts for one finished node and schedules `ready` (see
  // ScheduleReady); returns true iff the step is over.
  bool NodeDone(const absl::Status& s, TaggedNodeSeq* ready, ReadyQueue* inline_ready,
                TaggedNodeSeq* cheap_out = nullptr);
  // With `inline_ready` (on a Process loop) cheap nodes join it; without,
  // they go to the runner as one closure, or into `cheap_out` when given.
  void ScheduleReady(TaggedNodeSeq* ready, ReadyQueue* inline_ready,
                     TaggedNodeSeq* cheap_out = nullptr);
  // Hands each expensive node of `ready` to the runner; returns the others
  // and leaves `ready` empty.
  TaggedNodeSeq DispatchExpensive(TaggedNodeSeq* ready);
  bool ShouldStop();
  void RecordError(const absl::Status& s);
  void Finish();

  const Executor* const exec_;
  const int64_t step_id_;
  Rendezvous* const rendezvous_;
  CallFrame* const call_frame_;
  CancellationManager* const cancellation_manager_;
  StepStatsCollector* const stats_;
  const Runner runner_;
  // Whether this step times the kernels that may be expensive.
  const bool sample_costs_;
  const bool inline_start_;
  const absl::Time deadline_;
  DoneCallback done_;
  FrameState root_frame_;
  // The root frame's one iteration (recycled through the executor when the
  // step ends without error).
  std::unique_ptr<IterationState> root_iter_;
  // Live loop frame instances, by (parent instance, parent iteration, frame).
  absl::Mutex frames_mu_;
  absl::flat_hash_map<std::tuple<const FrameState*, int64_t, int32_t>, std::unique_ptr<FrameState>>
      frames_ ABSL_GUARDED_BY(frames_mu_);
  // Nodes ready or running; the step ends when it drops to zero.
  std::atomic<int64_t> num_outstanding_{0};
  std::atomic<bool> aborted_{false};
  absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_EXECUTOR_STATE_H_
