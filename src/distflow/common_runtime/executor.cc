#include "distflow/common_runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <limits>
#include <new>
#include <tuple>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/synchronization/notification.h"
#include "distflow/common_runtime/step_stats_collector.h"
#include "distflow/core/env.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/graph/control_flow.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {

// Everything about a node that the hot path needs, computed once.
struct Executor::NodeItem {
  OpKernel* kernel = nullptr;
  const Node* node = nullptr;
  const DataType* input_types = nullptr;  // kernel->input_types().data()
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
  // The frame the node runs in (an Enter runs in the frame around the one it
  // enters), and for an Enter the frame it enters.
  int32_t frame = 0;
  int32_t child_frame = -1;
  // Dead data inputs that make a Merge dead: all of them, or one for a loop's
  // Merge (fed by a NextIteration), which gets one input per iteration.
  int32_t merge_dead_needed = 0;
  LoopRole loop_role = LoopRole::kNone;
  bool is_constant_enter = false;
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
  // A Const in a graph without loops: its output, computed once when the
  // executor is built (sharing the kernel's buffer, so the buffer's count
  // stays above one and no consumer writes into it). Consumers read it in
  // place and the kernel does not run again.
  bool has_const_output = false;
  Tensor const_output;
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

namespace {

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

int MergeLiveInput(uint64_t pending) { return static_cast<int>(pending >> kMergeLiveShift) - 1; }

std::string NodePrefix(const Node& n) { return absl::StrCat(FormatNodeForError(n.def()), ": "); }

// 64-bit FNV-1a: stable across processes and builds, unlike absl::Hash.
uint64_t StableHash(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// The id of the instance of a frame entered in iteration `parent_iter` of
// the frame instance `parent_id`: what rendezvous keys carry as frame_id.
uint64_t ChildFrameId(uint64_t parent_id, int64_t parent_iter, uint64_t name_hash) {
  const uint64_t parts[3] = {parent_id, static_cast<uint64_t>(parent_iter), name_hash};
  return StableHash(parts, sizeof(parts));
}

}  // namespace

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

std::unique_ptr<Executor::IterationState> Executor::TakeIterationState() const {
  std::unique_ptr<IterationState> state;
  {
    absl::MutexLock l(&free_mu_);
    if (!free_iterations_.empty()) {
      state = std::move(free_iterations_.back());
      free_iterations_.pop_back();
    }
  }
  if (state == nullptr) state = std::make_unique<IterationState>(frames_[0]);
  state->Reset(frames_[0], 0);
  return state;
}

namespace {
constexpr int64_t kUnmeasured = std::numeric_limits<int64_t>::max();
}  // namespace

bool Executor::IsExpensive(const NodeItem& item) const {
  return item.may_be_expensive &&
         cost_nanos_[&item - items_.data()].load(std::memory_order_relaxed) >= kExpensiveNanos;
}

void Executor::RecordCost(const NodeItem& item, int64_t nanos) const {
  std::atomic<int64_t>& cost = cost_nanos_[&item - items_.data()];
  const int64_t old = cost.load(std::memory_order_relaxed);
  if (old == kUnmeasured) {
    cost.store(nanos, std::memory_order_relaxed);
    return;
  }
  // A sample far above the estimate is more likely the thread losing its
  // core than the kernel's own cost: it moves the estimate by a bounded step.
  cost.store((3 * old + std::min(nanos, 4 * old + kExpensiveNanos)) / 4, std::memory_order_relaxed);
}

void Executor::RecycleIterationState(std::unique_ptr<IterationState> state) const {
  // Enough for a few concurrent steps; more would only hold memory.
  constexpr size_t kMaxFree = 4;
  // With loops a root node may be left holding a value it never consumed
  // (an input of a node that never became ready): start from clean slots.
  if (has_loops_) state->ClearEntries(frames_[0]);
  absl::MutexLock l(&free_mu_);
  if (free_iterations_.size() < kMaxFree) {
    free_iterations_.push_back(std::move(state));
  }
}

// The state of one step of one executor. Deletes itself when the step ends.
class Executor::StepState {
 public:
  StepState(const Executor* exec, const Args& args, DoneCallback done);
  void RunAsync();

 private:
  using Entry = IterationState::Entry;
  // One instance of a frame: the root frame, or a loop frame entered in one
  // iteration of its parent. The root frame has one iteration forever and
  // needs no lock; a loop frame's fields below are guarded by `mu`.
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
    std::deque<std::unique_ptr<IterationState>> iterations;
    int64_t first_iter = 0;
    int64_t iteration_count = 0;
    int32_t num_pending_inputs = 0;
    // NextIteration values waiting for a free iteration (parallel_iterations
    // are alive), constant Enter values every iteration sees, and dead Exits
    // of the newest iteration (their deadness leaves the loop when it ends).
    std::vector<std::pair<const NodeItem*, Entry>> next_iter_roots;
    std::vector<std::pair<const NodeItem*, Entry>> loop_invariants;
    std::vector<const NodeItem*> dead_exits;
    std::vector<std::unique_ptr<IterationState>> free_iterations;

    IterationState* iteration(int64_t i) { return iterations[i - first_iter].get(); }
    bool is_root() const { return parent == nullptr; }
  };
  struct TaggedNode {
    const NodeItem* item;
    FrameState* frame;
    IterationState* iter;
    bool is_dead;
  };
  using TaggedNodeSeq = absl::InlinedVector<TaggedNode, 8>;
  // FIFO of nodes this thread runs next.
  class ReadyQueue {
   public:
    bool empty() const { return head_ == nodes_.size(); }
    void push_back(const TaggedNode& t) { nodes_.push_back(t); }
    TaggedNode pop_front() {
      TaggedNode t = nodes_[head_++];
      if (head_ == nodes_.size()) {
        nodes_.clear();
        head_ = 0;
      }
      return t;
    }
    // Takes every node of `ready` without copying them one by one.
    // REQUIRES: empty().
    void TakeAll(TaggedNodeSeq* ready) {
      nodes_.swap(*ready);
      ready->clear();
      head_ = 0;
    }

   private:
    TaggedNodeSeq nodes_;
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
  // `slot` is the input slot a data edge feeds, -1 for a control edge (only
  // a Merge needs to know which input it is).
  void ActivateNode(int32_t dst, int32_t slot, bool dead, FrameState* frame, IterationState* iter,
                    TaggedNodeSeq* ready);
  void ActivateMerge(int32_t dst, int32_t slot, bool dead, FrameState* frame, IterationState* iter,
                     TaggedNodeSeq* ready);

  // Loops. PropagateLoopOutputs moves a node's outputs within and between
  // frames and then releases the node's hold on its iteration; the rest keep
  // the frames' books. Functions named *Locked REQUIRE frame->mu.
  void PropagateLoopOutputs(const TaggedNode& tagged, OpKernelContext* ctx, TaggedNodeSeq* ready);
  static Entry TakeOutput(OpKernelContext* ctx);
  FrameState* FindOrCreateChildFrame(FrameState* frame, IterationState* iter,
                                     const NodeItem& enter);
  std::unique_ptr<IterationState> TakeLoopIterationLocked(FrameState* frame, int64_t iteration);
  void IncrementIterationLocked(FrameState* frame, TaggedNodeSeq* ready);
  // Ends finished iterations from `iteration` on; true iff the frame is done.
  bool CleanupIterationsLocked(FrameState* frame, int64_t iteration, TaggedNodeSeq* ready);
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
  CancellationManager* const cancellation_manager_;
  StepStatsCollector* const stats_;
  const Runner runner_;
  // Whether this step times the kernels that may be expensive.
  const bool sample_costs_;
  const bool inline_start_;
  const absl::Time deadline_;
  DoneCallback done_;
  FrameState root_frame_;
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

Executor::StepState::StepState(const Executor* exec, const Args& args, DoneCallback done)
    : exec_(exec),
      step_id_(args.step_id),
      rendezvous_(args.rendezvous),
      cancellation_manager_(args.cancellation_manager),
      stats_(args.stats_collector),
      runner_(args.runner),
      sample_costs_(
          exec->steps_started_.fetch_add(1, std::memory_order_relaxed) % kCostSampleSteps == 0),
      inline_start_(args.inline_start),
      deadline_(args.deadline),
      done_(std::move(done)) {
  root_frame_.info = &exec->frames_[0];
  root_frame_.iterations.push_back(exec->TakeIterationState());
}

void Executor::StepState::RunAsync() {
  if (exec_->roots_.empty()) {
    Finish();
    return;
  }
  if (cancellation_manager_ != nullptr && cancellation_manager_->IsCancelled()) {
    {
      absl::MutexLock l(&mu_);
      status_ = errors::Cancelled("Step ", step_id_, " was cancelled before it started");
    }
    Finish();
    return;
  }
  num_outstanding_.store(static_cast<int64_t>(exec_->roots_.size()), std::memory_order_relaxed);
  TaggedNodeSeq ready;
  for (int32_t r : exec_->roots_) {
    ready.push_back(
        TaggedNode{&exec_->items_[r], &root_frame_, root_frame_.iterations[0].get(), false});
  }
  if (!inline_start_) {
    ScheduleReady(&ready, nullptr);
    return;
  }
  // The cheap roots, not yet run, keep the step alive while this runs them.
  TaggedNodeSeq cheap = DispatchExpensive(&ready);
  if (!cheap.empty()) Process(std::move(cheap), stats_ != nullptr ? NowMicros() : 0);
}

void Executor::StepState::Process(TaggedNodeSeq nodes, int64_t scheduled_micros) {
  ++process_depth_;
  absl::Cleanup leave = [] { --process_depth_; };
  TaggedNodeSeq ready;
  ReadyQueue inline_ready;
  InputVector inputs;
  inline_ready.TakeAll(&nodes);
  bool completed = false;
  while (!inline_ready.empty()) {
    TaggedNode tagged = inline_ready.pop_front();
    const NodeItem& item = *tagged.item;
    IterationState* iter = tagged.iter;
    if (ShouldStop()) {
      completed = NodeDone(absl::OkStatus(), &ready, &inline_ready);
      continue;
    }
    // Every iteration of a loop passes a NextIteration: there an endless
    // loop meets the step's deadline, whichever thread runs it.
    if (item.loop_role == LoopRole::kNextIteration && deadline_ != absl::InfiniteFuture() &&
        absl::Now() > deadline_) {
      completed = NodeDone(
          errors::DeadlineExceeded("Step ", step_id_, " passed its deadline in iteration ",
                                   iter->iter, " of frame '", tagged.frame->info->name, "'"),
          &ready, &inline_ready);
      continue;
    }
    if (tagged.is_dead && !item.is_transfer) {
      // A dead node does not run; its outputs are all dead.
      ClearInputs(item, iter);
      PropagateOutputs(tagged, nullptr, &ready);
      completed = NodeDone(absl::OkStatus(), &ready, &inline_ready);
      continue;
    }
    if (item.has_const_output && stats_ == nullptr) {
      ActivateEdges(item, false, tagged.frame, iter, &ready, [&item](const OutEdge&, Entry* dst) {
        dst->const_value = &item.const_output;
        return false;
      });
      completed = NodeDone(absl::OkStatus(), &ready, &inline_ready);
      continue;
    }
    std::unique_ptr<NodeStatsRecorder> rec;
    if (stats_ != nullptr) {
      rec = std::make_unique<NodeStatsRecorder>(item.node->name(), scheduled_micros);
    }
    bool is_input_dead = false;
    absl::Status s = PrepareInputs(item, iter, &inputs, &is_input_dead);
    if (!s.ok()) {
      completed = NodeDone(s, &ready, &inline_ready);
      continue;
    }
    OpKernelContext::Params params;
    params.step_id = step_id_;
    params.op_kernel = item.kernel;
    params.device = exec_->device_;
    params.inputs = inputs.data();
    params.num_inputs = item.num_inputs;
    params.is_input_dead = is_input_dead;
    params.rendezvous = rendezvous_;
    params.cancellation_manager = cancellation_manager_;
    params.frame_iter = FrameAndIter{tagged.frame->frame_id, iter->iter};
    params.runner = &runner_;
    if (item.is_async) {
      // The callback may run before ComputeAsync returns, even finish the
      // step: nothing below touches `this` unless inline_ready holds nodes,
      // which keep the step alive.
      auto* state = new AsyncState(params, tagged, std::move(inputs), std::move(rec));
      inputs.clear();
      if (state->rec != nullptr) state->rec->OpStart();
      const InlineAsyncCall outer = inline_async_call_;
      inline_async_call_ = {state, &inline_ready};
      item.kernel->AsAsync()->ComputeAsync(&state->ctx, [this, state] {
        // Called before ComputeAsync returned, on its thread (a _Recv whose
        // value was there): this thread's loop runs what it makes ready.
        ReadyQueue* queue = nullptr;
        if (inline_async_call_.state == state) {
          queue = inline_async_call_.queue;
          inline_async_call_ = {};
        }
        AsyncDone(state, queue);
      });
      inline_async_call_ = outer;
      continue;
    }
    OpKernelContext ctx(&params);
    if (rec != nullptr) rec->OpStart();
    const bool timed = sample_costs_ && item.may_be_expensive;
    const auto start =
        timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    // No exception leaves a kernel: one that throws (a failed allocation
    // it did not check) fails its node, not the process.
    try {
      item.kernel->Compute(&ctx);
    } catch (const std::bad_alloc&) {
      ctx.SetStatus(errors::ResourceExhausted("out of memory while computing the node"));
    } catch (const std::exception& e) {
      ctx.SetStatus(errors::Internal("the kernel threw: ", e.what()));
    }
    if (timed) {
      exec_->RecordCost(item, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - start)
                                  .count());
    }
    if (rec != nullptr) rec->OpEnd();
    ClearInputs(item, iter);
    s = ProcessOutputs(tagged, &ctx, &ready);
    if (rec != nullptr) rec->Finish(&ctx, exec_->device_->name(), stats_);
    completed = NodeDone(s, &ready, &inline_ready);
  }
  if (completed) Finish();
}

thread_local Executor::StepState::InlineAsyncCall Executor::StepState::inline_async_call_;
thread_local int Executor::StepState::process_depth_ = 0;

void Executor::StepState::AsyncDone(AsyncState* state, ReadyQueue* inline_ready) {
  const TaggedNode& tagged = state->tagged;
  if (state->rec != nullptr) state->rec->OpEnd();
  ClearInputs(*tagged.item, tagged.iter);
  TaggedNodeSeq ready;
  const absl::Status s = ProcessOutputs(tagged, &state->ctx, &ready);
  if (state->rec != nullptr) {
    state->rec->Finish(&state->ctx, exec_->device_->name(), stats_);
  }
  delete state;
  if (inline_ready != nullptr || process_depth_ > 0) {
    if (NodeDone(s, &ready, inline_ready)) Finish();
    return;
  }
  // Outside any Process loop (an RPC's completion, a timer): the cheap
  // nodes run here rather than after a hand-off; no loop is nested in
  // another this way.
  TaggedNodeSeq cheap;
  if (NodeDone(s, &ready, nullptr, &cheap)) {
    Finish();
  } else if (!cheap.empty()) {
    Process(std::move(cheap), stats_ != nullptr ? NowMicros() : 0);
  }
}

absl::Status Executor::StepState::PrepareInputs(const NodeItem& item, IterationState* iter,
                                                InputVector* inputs, bool* is_input_dead) {
  inputs->resize(item.num_inputs);
  Entry* entries = iter->entries.get() + item.input_start;
  if (item.is_merge) {
    // Only the live input is read: the others may not have arrived, and
    // their producers may still be writing their slots.
    const int live =
        MergeLiveInput(iter->pending[item.pending_index].load(std::memory_order_acquire));
    for (int i = 0; i < item.num_inputs; ++i) {
      if (i != live) {
        (*inputs)[i] = TensorValue();
      } else if (entries[i].const_value != nullptr) {
        (*inputs)[i] = TensorValue(const_cast<Tensor*>(entries[i].const_value));
      } else if (entries[i].ref_mu != nullptr) {
        (*inputs)[i] = TensorValue(entries[i].ref_mu, entries[i].ref);
      } else {
        (*inputs)[i] = TensorValue(&entries[i].value);
      }
    }
    return absl::OkStatus();
  }
  for (int i = 0; i < item.num_inputs; ++i) {
    Entry& e = entries[i];
    if (e.const_value != nullptr) {
      // Never a ref, never dead, never forwarded (see const_output).
      (*inputs)[i] = TensorValue(const_cast<Tensor*>(e.const_value));
      continue;
    }
    if (e.is_dead) *is_input_dead = true;
    const bool wants_ref = IsRefType(item.input_types[i]);
    if (e.ref_mu != nullptr) {
      {
        absl::ReaderMutexLock l(e.ref_mu);
        // Only initialization ops (Assign, IsVariableInitialized) may see a
        // variable that was never assigned.
        if (!e.ref->IsInitialized() && !item.node->op_def().allows_uninitialized_input()) {
          return errors::FailedPrecondition(NodePrefix(*item.node),
                                            "Attempting to use uninitialized value ",
                                            item.node->def().input(i));
        }
        // A value consumer of a ref edge reads a snapshot (sharing the
        // buffer).
        if (!wants_ref) e.value = *e.ref;
      }
      if (wants_ref) {
        (*inputs)[i] = TensorValue(e.ref_mu, e.ref);
        continue;
      }
      e.ref = nullptr;
      e.ref_mu = nullptr;
    } else if (wants_ref && !e.is_dead) {
      return errors::Internal(NodePrefix(*item.node), "input ", i,
                              " expects a reference but got a value");
    }
    (*inputs)[i] = TensorValue(&e.value);
  }
  return absl::OkStatus();
}

void Executor::StepState::ClearInputs(const NodeItem& item, IterationState* iter) {
  Entry* entries = iter->entries.get() + item.input_start;
  if (item.is_merge) {
    // Only the live input's slot is ours to clear (see PrepareInputs).
    const int live =
        MergeLiveInput(iter->pending[item.pending_index].load(std::memory_order_acquire));
    if (live >= 0) entries[live] = Entry();
    return;
  }
  for (int i = 0; i < item.num_inputs; ++i) {
    entries[i].value.Clear();
    entries[i].const_value = nullptr;
    entries[i].ref = nullptr;
    entries[i].ref_mu = nullptr;
    entries[i].is_dead = false;
  }
}

absl::Status Executor::StepState::ProcessOutputs(const TaggedNode& tagged, OpKernelContext* ctx,
                                                 TaggedNodeSeq* ready) {
  const NodeItem& item = *tagged.item;
  if (!ctx->status().ok()) {
    if (tagged.frame->is_root()) return errors::Annotate(ctx->status(), NodePrefix(*item.node));
    return errors::Annotate(
        ctx->status(),
        absl::StrCat(FormatNodeForError(item.node->def()), " in iteration ", tagged.iter->iter,
                     " of frame '", tagged.frame->info->name, "': "));
  }
  for (int i = 0; i < item.num_outputs; ++i) {
    if (!ctx->output_is_set(i)) {
      if (item.unset_output_is_dead) continue;
      return errors::Internal(NodePrefix(*item.node), "the kernel set no value", " for output ", i);
    }
    const TensorValue v = ctx->output_value(i);
    if (!v.is_ref() && v.tensor->dtype() != item.kernel->output_type(i)) {
      return errors::Internal(NodePrefix(*item.node), "output ", i, " is ",
                              DataTypeString(v.tensor->dtype()), " but the op declares ",
                              DataTypeString(item.kernel->output_type(i)));
    }
  }
  PropagateOutputs(tagged, ctx, ready);
  return absl::OkStatus();
}

void Executor::StepState::PropagateOutputs(const TaggedNode& tagged, OpKernelContext* ctx,
                                           TaggedNodeSeq* ready) {
  if (exec_->has_loops_) {
    PropagateLoopOutputs(tagged, ctx, ready);
    return;
  }
  ActivateFromContext(*tagged.item, ctx, tagged.is_dead, tagged.frame, tagged.iter, ready);
}

template <typename SetInput>
void Executor::StepState::ActivateEdges(const NodeItem& item, bool node_dead, FrameState* frame,
                                        IterationState* iter, TaggedNodeSeq* ready,
                                        SetInput set_input) {
  const OutEdge* edges = exec_->out_edges_.data();
  for (int32_t k = item.out_edge_begin; k < item.out_edge_end; ++k) {
    const OutEdge& e = edges[k];
    Entry& dst = iter->entries[e.dst_slot];
    const bool dead = set_input(e, &dst);
    dst.is_dead = dead;
    ActivateNode(e.dst, e.dst_slot, dead, frame, iter, ready);
  }
  const int32_t* control = exec_->control_out_.data();
  for (int32_t k = item.control_begin; k < item.control_end; ++k) {
    ActivateNode(control[k], -1, node_dead, frame, iter, ready);
  }
}

void Executor::StepState::ActivateFromContext(const NodeItem& item, OpKernelContext* ctx,
                                              bool node_dead, FrameState* frame,
                                              IterationState* iter, TaggedNodeSeq* ready) {
  ActivateEdges(item, node_dead, frame, iter, ready, [ctx](const OutEdge& e, Entry* dst) {
    if (ctx == nullptr || !ctx->output_is_set(e.src_output)) return true;
    const TensorValue v = ctx->output_value(e.src_output);
    if (v.is_ref()) {
      dst->ref = v.tensor;
      dst->ref_mu = v.mutex_if_ref;
    } else if (e.is_last_use) {
      dst->value = std::move(*v.tensor);
    } else {
      dst->value = *v.tensor;
    }
    return false;
  });
}

void Executor::StepState::ActivateFromEntry(const NodeItem& item, const Entry& value,
                                            FrameState* frame, IterationState* iter,
                                            TaggedNodeSeq* ready) {
  ActivateEdges(item, value.is_dead, frame, iter, ready, [&value](const OutEdge&, Entry* dst) {
    if (value.is_dead) return true;
    dst->value = value.value;
    dst->ref = value.ref;
    dst->ref_mu = value.ref_mu;
    return false;
  });
}

void Executor::StepState::ActivateNode(int32_t dst, int32_t slot, bool dead, FrameState* frame,
                                       IterationState* iter, TaggedNodeSeq* ready) {
  const NodeItem& item = exec_->items_[dst];
  if (item.is_merge) {
    ActivateMerge(dst, slot, dead, frame, iter, ready);
    return;
  }
  if (item.num_pending == 1) {
    // The only producer: no one else touches the count.
    ready->push_back(TaggedNode{&item, frame, iter, dead});
    return;
  }
  // acq_rel: the thread that sees the count reach zero sees every input
  // written before the other producers' decrements.
  const uint64_t delta = dead ? kDeadInput - 1 : ~uint64_t{0};
  const uint64_t now =
      iter->pending[item.pending_index].fetch_add(delta, std::memory_order_acq_rel) + delta;
  if ((now & kPendingMask) == 0) {
    ready->push_back(TaggedNode{&item, frame, iter, (now >> 32) != 0});
  }
}

void Executor::StepState::ActivateMerge(int32_t dst, int32_t slot, bool dead, FrameState* frame,
                                        IterationState* iter, TaggedNodeSeq* ready) {
  const NodeItem& item = exec_->items_[dst];
  std::atomic<uint64_t>& pending = iter->pending[item.pending_index];
  const int input = slot < 0 ? -1 : slot - item.input_start;
  uint64_t now;
  if (input < 0) {
    // A control input: counts, whatever its deadness.
    now = pending.fetch_sub(1, std::memory_order_acq_rel) - 1;
  } else if (!dead) {
    // The first live input takes the slot; later ones are ignored.
    uint64_t old = pending.load(std::memory_order_acquire);
    do {
      if (MergeLiveInput(old) >= 0) return;
      now = (old | (static_cast<uint64_t>(input + 1) << kMergeLiveShift)) - 1;
    } while (!pending.compare_exchange_weak(old, now, std::memory_order_acq_rel,
                                            std::memory_order_acquire));
  } else {
    now = pending.fetch_add(kDeadInput, std::memory_order_acq_rel) + kDeadInput;
    if (MergeLiveInput(now) >= 0 ||
        ((now >> 32) & kMergeDeadMask) != static_cast<uint64_t>(item.merge_dead_needed)) {
      return;
    }
    // Enough data inputs are dead: release the slot, and the Merge is dead.
    now = pending.fetch_sub(1, std::memory_order_acq_rel) - 1;
  }
  if ((now & kPendingMask) == 0) {
    ready->push_back(TaggedNode{&item, frame, iter, MergeLiveInput(now) < 0});
  }
}

// The value of a loop node's only output, dead when it has none.
Executor::IterationState::Entry Executor::StepState::TakeOutput(OpKernelContext* ctx) {
  Entry v;
  if (ctx == nullptr || !ctx->output_is_set(0)) {
    v.is_dead = true;
    return v;
  }
  const TensorValue out = ctx->output_value(0);
  if (out.is_ref()) {
    v.ref = out.tensor;
    v.ref_mu = out.mutex_if_ref;
  } else {
    v.value = std::move(*out.tensor);
  }
  return v;
}

void Executor::StepState::PropagateLoopOutputs(const TaggedNode& tagged, OpKernelContext* ctx,
                                               TaggedNodeSeq* ready) {
  const NodeItem& item = *tagged.item;
  FrameState* frame = tagged.frame;
  IterationState* iter = tagged.iter;
  // Activations in a loop frame count towards the target iteration's
  // outstanding ops; the root frame keeps no books (it ends with the step).
  auto counted = [ready](IterationState* target, auto&& activate) {
    const size_t before = ready->size();
    activate();
    target->outstanding_ops += static_cast<int64_t>(ready->size() - before);
  };
  switch (item.loop_role) {
    case LoopRole::kNone:
      if (frame->is_root()) {
        ActivateFromContext(item, ctx, tagged.is_dead, frame, iter, ready);
        return;
      }
      {
        absl::MutexLock l(&frame->mu);
        counted(iter, [&] { ActivateFromContext(item, ctx, tagged.is_dead, frame, iter, ready); });
      }
      break;
    case LoopRole::kEnter: {
      const Entry value = TakeOutput(ctx);
      FrameState* child = FindOrCreateChildFrame(frame, iter, item);
      bool child_done = false;
      {
        absl::MutexLock l(&child->mu);
        if (item.is_constant_enter) {
          // Every live iteration sees it now, every later one when it starts.
          child->loop_invariants.emplace_back(&item, value);
          for (auto& it : child->iterations) {
            counted(it.get(), [&] { ActivateFromEntry(item, value, child, it.get(), ready); });
          }
        } else {
          IterationState* first = child->iteration(0);
          counted(first, [&] { ActivateFromEntry(item, value, child, first, ready); });
        }
        child_done = --child->num_pending_inputs == 0 &&
                     CleanupIterationsLocked(child, child->first_iter, ready);
      }
      if (child_done) DeleteFrame(child, ready);
      break;
    }
    case LoopRole::kExit: {
      const Entry value = TakeOutput(ctx);
      if (value.is_dead) {
        // Only the newest iteration's dead Exits matter: an older
        // iteration's Exit is dead because the loop went on.
        absl::MutexLock l(&frame->mu);
        if (iter->iter == frame->iteration_count) frame->dead_exits.push_back(&item);
      } else if (frame->parent->is_root()) {
        ActivateFromEntry(item, value, frame->parent, frame->parent_iter, ready);
      } else {
        absl::MutexLock l(&frame->parent->mu);
        counted(frame->parent_iter,
                [&] { ActivateFromEntry(item, value, frame->parent, frame->parent_iter, ready); });
      }
      break;
    }
    case LoopRole::kNextIteration: {
      Entry value = TakeOutput(ctx);
      // A dead NextIteration ends the loop: nothing goes to the next
      // iteration.
      if (value.is_dead) break;
      absl::MutexLock l(&frame->mu);
      if (iter->iter == frame->iteration_count &&
          frame->iteration_count - frame->first_iter + 1 >= frame->info->parallel_iterations) {
        // parallel_iterations are alive: wait until the oldest ends.
        frame->next_iter_roots.emplace_back(&item, std::move(value));
        break;
      }
      if (iter->iter == frame->iteration_count) IncrementIterationLocked(frame, ready);
      IterationState* next = frame->iteration(iter->iter + 1);
      counted(next, [&] { ActivateFromEntry(item, value, frame, next, ready); });
      break;
    }
  }
  DecrementOutstandingOps(frame, iter, ready);
}

Executor::StepState::FrameState* Executor::StepState::FindOrCreateChildFrame(
    FrameState* frame, IterationState* iter, const NodeItem& enter) {
  const std::tuple<const FrameState*, int64_t, int32_t> key{frame, iter->iter, enter.child_frame};
  FrameState* child = nullptr;
  {
    absl::MutexLock l(&frames_mu_);
    std::unique_ptr<FrameState>& slot = frames_[key];
    if (slot != nullptr) return slot.get();
    slot = std::make_unique<FrameState>();
    child = slot.get();
    const FrameInfo& info = exec_->frames_[enter.child_frame];
    child->info = &info;
    child->frame_id = ChildFrameId(frame->frame_id, iter->iter, info.name_hash);
    child->parent = frame;
    child->parent_iter = iter;
    child->key = key;
    absl::MutexLock cl(&child->mu);
    child->num_pending_inputs = info.num_enters;
    child->iterations.push_back(TakeLoopIterationLocked(child, 0));
  }
  // The parent iteration cannot end before this child: the Enter creating it
  // is still running in it, and the child cannot end before that Enter is
  // counted.
  if (!frame->is_root()) {
    absl::MutexLock l(&frame->mu);
    ++iter->outstanding_frames;
  }
  return child;
}

std::unique_ptr<Executor::IterationState> Executor::StepState::TakeLoopIterationLocked(
    FrameState* frame, int64_t iteration) {
  std::unique_ptr<IterationState> state;
  if (!frame->free_iterations.empty()) {
    state = std::move(frame->free_iterations.back());
    frame->free_iterations.pop_back();
  } else {
    state = std::make_unique<IterationState>(*frame->info);
  }
  state->Reset(*frame->info, iteration);
  return state;
}

void Executor::StepState::IncrementIterationLocked(FrameState* frame, TaggedNodeSeq* ready) {
  ++frame->iteration_count;
  frame->iterations.push_back(TakeLoopIterationLocked(frame, frame->iteration_count));
  IterationState* next = frame->iterations.back().get();
  frame->dead_exits.clear();
  const size_t before = ready->size();
  for (auto& [item, value] : frame->next_iter_roots) {
    ActivateFromEntry(*item, value, frame, next, ready);
  }
  frame->next_iter_roots.clear();
  for (const auto& [item, value] : frame->loop_invariants) {
    ActivateFromEntry(*item, value, frame, next, ready);
  }
  next->outstanding_ops += static_cast<int64_t>(ready->size() - before);
}

bool Executor::StepState::CleanupIterationsLocked(FrameState* frame, int64_t iteration,
                                                  TaggedNodeSeq* ready) {
  // An iteration is done when nothing runs in it or in frames it entered,
  // the one before it is done, and (for the first) every Enter has come.
  while (iteration == frame->first_iter && iteration <= frame->iteration_count) {
    IterationState* state = frame->iteration(iteration);
    if (state->outstanding_ops != 0 || state->outstanding_frames != 0 ||
        (iteration == 0 && frame->num_pending_inputs != 0)) {
      break;
    }
    std::unique_ptr<IterationState> done = std::move(frame->iterations.front());
    frame->iterations.pop_front();
    ++frame->first_iter;
    ++iteration;
    done->ClearEntries(*frame->info);
    constexpr size_t kMaxFree = 2;
    if (frame->free_iterations.size() < kMaxFree) frame->free_iterations.push_back(std::move(done));
    if (!frame->next_iter_roots.empty()) IncrementIterationLocked(frame, ready);
  }
  return frame->num_pending_inputs == 0 && frame->iterations.empty();
}

void Executor::StepState::DecrementOutstandingOps(FrameState* frame, IterationState* iter,
                                                  TaggedNodeSeq* ready) {
  if (frame->is_root()) return;
  bool done = false;
  {
    absl::MutexLock l(&frame->mu);
    const int64_t iteration = iter->iter;
    done = --iter->outstanding_ops == 0 && CleanupIterationsLocked(frame, iteration, ready);
  }
  if (done) DeleteFrame(frame, ready);
}

void Executor::StepState::DeleteFrame(FrameState* frame, TaggedNodeSeq* ready) {
  while (frame != nullptr && !frame->is_root()) {
    FrameState* parent = frame->parent;
    IterationState* parent_iter = frame->parent_iter;
    // A loop whose last iteration's Exits are dead (a loop that was entered
    // with dead values) hands that deadness to the frame around it.
    std::vector<const NodeItem*> dead_exits;
    {
      absl::MutexLock l(&frame->mu);
      dead_exits.swap(frame->dead_exits);
    }
    Entry dead;
    dead.is_dead = true;
    if (parent->is_root()) {
      for (const NodeItem* exit : dead_exits) {
        ActivateFromEntry(*exit, dead, parent, parent_iter, ready);
      }
    }
    std::unique_ptr<FrameState> owned;
    {
      absl::MutexLock l(&frames_mu_);
      auto it = frames_.find(frame->key);
      owned = std::move(it->second);
      frames_.erase(it);
    }
    owned.reset();
    if (parent->is_root()) return;
    bool parent_done = false;
    {
      absl::MutexLock l(&parent->mu);
      const size_t before = ready->size();
      for (const NodeItem* exit : dead_exits) {
        ActivateFromEntry(*exit, dead, parent, parent_iter, ready);
      }
      parent_iter->outstanding_ops += static_cast<int64_t>(ready->size() - before);
      --parent_iter->outstanding_frames;
      parent_done = CleanupIterationsLocked(parent, parent_iter->iter, ready);
    }
    frame = parent_done ? parent : nullptr;
  }
}

bool Executor::StepState::NodeDone(const absl::Status& s, TaggedNodeSeq* ready,
                                   ReadyQueue* inline_ready, TaggedNodeSeq* cheap_out) {
  if (!s.ok()) {
    RecordError(s);
    ready->clear();
  } else if (aborted_.load(std::memory_order_relaxed)) {
    ready->clear();
  }
  const int64_t n = static_cast<int64_t>(ready->size());
  if (n == 0) {
    return num_outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  // Count the new nodes before anyone can finish them.
  if (n > 1) num_outstanding_.fetch_add(n - 1, std::memory_order_relaxed);
  ScheduleReady(ready, inline_ready, cheap_out);
  return false;
}

void Executor::StepState::ScheduleReady(TaggedNodeSeq* ready, ReadyQueue* inline_ready,
                                        TaggedNodeSeq* cheap_out) {
  const int64_t scheduled = stats_ != nullptr ? NowMicros() : 0;
  auto dispatch = [this, scheduled](const TaggedNode& t) {
    runner_([this, nodes = TaggedNodeSeq{t}, scheduled]() mutable {
      Process(std::move(nodes), scheduled);
    });
  };
  if (inline_ready == nullptr) {
    // Not on a thread that runs nodes (the step's start, an async kernel's
    // callback): every expensive node gets a thread of its own and the cheap
    // ones share one, so a fan-out costs one hand-off, not one per node.
    TaggedNodeSeq cheap = DispatchExpensive(ready);
    if (cheap_out != nullptr) {
      *cheap_out = std::move(cheap);
    } else if (!cheap.empty()) {
      runner_([this, nodes = std::move(cheap), scheduled]() mutable {
        Process(std::move(nodes), scheduled);
      });
    }
    return;
  }
  if (inline_ready->empty() &&
      std::none_of(ready->begin(), ready->end(), [this](const TaggedNode& t) {
        return !t.is_dead && exec_->IsExpensive(*t.item);
      })) {
    // The common case (a chain, a fan-out of cheap nodes): run them all here.
    inline_ready->TakeAll(ready);
    return;
  }
  const TaggedNode* expensive = nullptr;
  for (const TaggedNode& t : *ready) {
    if (t.is_dead || !exec_->IsExpensive(*t.item)) {
      inline_ready->push_back(t);
      continue;
    }
    // More than one expensive node: all but the last go to other threads.
    if (expensive != nullptr) dispatch(*expensive);
    expensive = &t;
  }
  if (expensive != nullptr) {
    // Keep it here when there is nothing cheap to do; hand it off otherwise.
    if (inline_ready->empty()) {
      inline_ready->push_back(*expensive);
    } else {
      dispatch(*expensive);
    }
  }
  ready->clear();
}

Executor::StepState::TaggedNodeSeq Executor::StepState::DispatchExpensive(TaggedNodeSeq* ready) {
  const int64_t scheduled = stats_ != nullptr ? NowMicros() : 0;
  TaggedNodeSeq cheap;
  for (const TaggedNode& t : *ready) {
    if (!t.is_dead && exec_->IsExpensive(*t.item)) {
      runner_([this, nodes = TaggedNodeSeq{t}, scheduled]() mutable {
        Process(std::move(nodes), scheduled);
      });
    } else {
      cheap.push_back(t);
    }
  }
  ready->clear();
  return cheap;
}

bool Executor::StepState::ShouldStop() {
  if (aborted_.load(std::memory_order_acquire)) return true;
  if (cancellation_manager_ == nullptr || !cancellation_manager_->IsCancelled()) {
    return false;
  }
  {
    absl::MutexLock l(&mu_);
    if (status_.ok()) {
      status_ = errors::Cancelled("Step ", step_id_, " was cancelled");
    }
  }
  aborted_.store(true, std::memory_order_release);
  return true;
}

void Executor::StepState::RecordError(const absl::Status& s) {
  // An error after the step was cancelled is most likely an echo of the
  // cancellation (a receive that was aborted): report it as such so the
  // barrier prefers the error that caused it.
  const bool cancelled = cancellation_manager_ != nullptr && cancellation_manager_->IsCancelled();
  bool first = false;
  {
    absl::MutexLock l(&mu_);
    if (status_.ok()) {
      status_ = cancelled ? absl::CancelledError(s.message()) : s;
      first = true;
    }
  }
  aborted_.store(true, std::memory_order_release);
  // A derived error (a peer's failure echoed through the rendezvous) still
  // ends this step here: cancel and abort as for a cause of our own.
  if (!first || cancelled) return;
  // Cancel first: a receiver released by the rendezvous abort then already
  // sees the step as cancelled and reports an echo, not a second cause.
  if (cancellation_manager_ != nullptr) cancellation_manager_->StartCancel();
  if (rendezvous_ != nullptr) rendezvous_->StartAbort(s);
}

void Executor::StepState::Finish() {
  absl::Status s;
  {
    absl::MutexLock l(&mu_);
    s = status_;
  }
  if (s.ok()) {
    exec_->RecycleIterationState(std::move(root_frame_.iterations[0]));
  }
  DoneCallback done = std::move(done_);
  delete this;
  done(s);
}

Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(Params params,
                                                           std::unique_ptr<const Graph> graph) {
  if (params.device == nullptr) {
    return errors::InvalidArgument("Executor::Create needs a device");
  }
  std::unique_ptr<Executor> exec(new Executor);
  exec->device_ = params.device;
  exec->graph_ = std::move(graph);
  KernelFactory create_kernel = std::move(params.create_kernel);
  if (!create_kernel) {
    Device* device = params.device;
    create_kernel = [device](const NodeDef& def) -> absl::StatusOr<std::shared_ptr<OpKernel>> {
      DF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                          KernelRegistry::Global()->CreateKernel(device, def));
      return std::shared_ptr<OpKernel>(std::move(k));
    };
  }
  DF_RETURN_IF_ERROR(exec->Initialize(create_kernel));
  return exec;
}

absl::Status Executor::Initialize(const KernelFactory& create_kernel) {
  std::vector<Node*> order;
  DF_RETURN_IF_ERROR(TopologicalOrder(*graph_, &order));
  ControlFlowInfo cf;
  DF_RETURN_IF_ERROR(BuildControlFlowInfo(*graph_, &cf));
  has_loops_ = cf.frames.size() > 1;
  frames_.resize(cf.frames.size());
  for (size_t f = 0; f < cf.frames.size(); ++f) {
    FrameInfo& info = frames_[f];
    info.name = cf.frames[f].name;
    info.name_hash = StableHash(info.name.data(), info.name.size());
    info.parent = cf.frames[f].parent;
    info.parallel_iterations = cf.frames[f].parallel_iterations;
  }

  std::vector<int32_t> index(graph_->num_node_ids(), -1);
  for (size_t i = 0; i < order.size(); ++i) {
    index[order[i]->id()] = static_cast<int32_t>(i);
  }
  items_.resize(order.size());
  cost_nanos_ = std::make_unique<std::atomic<int64_t>[]>(order.size());
  for (size_t i = 0; i < order.size(); ++i) cost_nanos_[i].store(kUnmeasured);
  kernels_.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const Node* n = order[i];
    absl::StatusOr<std::shared_ptr<OpKernel>> kernel = create_kernel(n->def());
    if (!kernel.ok()) return kernel.status();
    if (*kernel == nullptr) {
      return errors::Internal(NodePrefix(*n), "no kernel was created");
    }
    kernels_.push_back(*std::move(kernel));
    NodeItem& item = items_[i];
    item.kernel = kernels_.back().get();
    item.node = n;
    item.input_types = item.kernel->input_types().data();
    item.num_inputs = item.kernel->num_inputs();
    item.num_outputs = item.kernel->num_outputs();
    if (item.num_inputs != n->num_inputs() || item.num_outputs != n->num_outputs()) {
      return errors::Internal(NodePrefix(*n), "the kernel's arity differs from the node's");
    }
    item.frame = cf.InputFrame(n);
    FrameInfo& frame = frames_[item.frame];
    item.pending_index = frame.num_nodes++;
    item.input_start = frame.total_inputs;
    frame.total_inputs += item.num_inputs;
    item.is_async = item.kernel->AsAsync() != nullptr;
    item.may_be_expensive = item.kernel->IsExpensive();
    item.is_transfer = n->IsSend() || n->IsRecv();
    item.unset_output_is_dead =
        n->IsRecv() || n->type_string() == "Switch" || n->type_string() == "RefSwitch" ||
        n->type_string() == "_SwitchN";
    item.is_merge = n->IsMerge();
    // In loops entries are copied between iterations and frames; there a
    // Const's output travels as any other.
    if (!has_loops_ && n->type_string() == "Const") {
      OpKernelContext::Params params;
      params.op_kernel = item.kernel;
      params.device = device_;
      OpKernelContext ctx(&params);
      item.kernel->Compute(&ctx);
      DF_RETURN_IF_ERROR(errors::Annotate(ctx.status(), NodePrefix(*n)));
      if (item.num_outputs == 1 && ctx.output_is_set(0) && !ctx.output_value(0).is_ref()) {
        item.const_output = *ctx.mutable_output(0);
        item.has_const_output = true;
      }
    }
    if (IsEnter(n)) {
      item.loop_role = LoopRole::kEnter;
      item.child_frame = cf.node_frame[n->id()];
      ++frames_[item.child_frame].num_enters;
      if (n->attrs().Find("is_constant") != nullptr) {
        DF_RETURN_IF_ERROR(GetNodeAttr(n->attrs(), "is_constant", &item.is_constant_enter));
      }
    } else if (IsExit(n)) {
      item.loop_role = LoopRole::kExit;
    } else if (n->IsNextIteration()) {
      item.loop_role = LoopRole::kNextIteration;
    }
    if (has_loops_ && item.num_outputs != 1 && item.loop_role != LoopRole::kNone) {
      return errors::InvalidArgument(NodePrefix(*n), "a loop node must have one output");
    }
  }

  std::vector<bool> has_input;
  std::vector<bool> seen_output;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node* n = order[i];
    NodeItem& item = items_[i];
    has_input.assign(item.num_inputs, false);
    bool fed_by_next_iteration = false;
    for (const Edge* e : n->in_edges()) {
      if (!e->src()->IsOp()) continue;
      ++item.num_pending;
      if (e->IsControlEdge()) continue;
      if (has_input[e->dst_input()]) {
        return errors::InvalidArgument(NodePrefix(*n), "input ", e->dst_input(), " has two edges");
      }
      has_input[e->dst_input()] = true;
      fed_by_next_iteration |= e->src()->IsNextIteration();
    }
    for (int k = 0; k < item.num_inputs; ++k) {
      if (!has_input[k]) {
        return errors::InvalidArgument(NodePrefix(*n), "input ", k, " is not connected");
      }
    }
    if (item.is_merge) {
      // Its control inputs, plus one slot for the live (or last dead) input.
      item.num_pending -= item.num_inputs - 1;
      if (item.num_inputs > static_cast<int32_t>(kMergeDeadMask)) {
        return errors::InvalidArgument(NodePrefix(*n), "a Merge takes at most ", kMergeDeadMask,
                                       " inputs");
      }
      item.merge_dead_needed = fed_by_next_iteration ? 1 : item.num_inputs;
    }
    if (item.num_pending == 0) roots_.push_back(static_cast<int32_t>(i));

    item.out_edge_begin = static_cast<int32_t>(out_edges_.size());
    item.control_begin = static_cast<int32_t>(control_out_.size());
    for (const Edge* e : n->out_edges()) {
      if (!e->dst()->IsOp()) continue;
      const int32_t dst = index[e->dst()->id()];
      if (e->IsControlEdge()) {
        control_out_.push_back(dst);
      } else {
        out_edges_.push_back(
            OutEdge{dst, e->src_output(), items_[dst].input_start + e->dst_input(), false});
      }
    }
    item.out_edge_end = static_cast<int32_t>(out_edges_.size());
    item.control_end = static_cast<int32_t>(control_out_.size());
    seen_output.assign(item.num_outputs, false);
    for (int32_t k = item.out_edge_end - 1; k >= item.out_edge_begin; --k) {
      OutEdge& e = out_edges_[k];
      if (!seen_output[e.src_output]) {
        seen_output[e.src_output] = true;
        e.is_last_use = true;
      }
    }
  }
  for (const NodeItem& item : items_) {
    frames_[item.frame].initial_pending.push_back(static_cast<uint64_t>(item.num_pending));
  }
  return absl::OkStatus();
}

void Executor::RunAsync(const Args& args, DoneCallback done) const {
  DF_CHECK_MSG(static_cast<bool>(args.runner), "Executor::Args.runner is required");
  (new StepState(this, args, std::move(done)))->RunAsync();
}

absl::Status Executor::Run(const Args& args) const {
  absl::Notification n;
  absl::Status status;
  RunAsync(args, [&](const absl::Status& s) {
    status = s;
    n.Notify();
  });
  n.WaitForNotification();
  return status;
}

ExecutorBarrier::ExecutorBarrier(int num_executors, Executor::DoneCallback done)
    : pending_(num_executors), done_(std::move(done)) {
  DF_CHECK(num_executors >= 1);
}

Executor::DoneCallback ExecutorBarrier::Get() {
  return [this](const absl::Status& s) { WhenDone(s); };
}

void ExecutorBarrier::WhenDone(const absl::Status& s) {
  bool last = false;
  absl::Status status;
  {
    absl::MutexLock l(&mu_);
    if (errors::IsBetterCause(s, status_)) status_ = s;
    last = --pending_ == 0;
    if (last) status = status_;
  }
  if (!last) return;
  Executor::DoneCallback done = std::move(done_);
  delete this;
  done(status);
}

}  // namespace distflow
