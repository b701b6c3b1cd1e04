#include "distflow/common_runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <new>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/synchronization/notification.h"
#include "distflow/common_runtime/step_stats_collector.h"
#include "distflow/core/env.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/graph/graph_constructor.h"

namespace distflow {

// Everything about a node that the hot path needs, computed once.
struct Executor::NodeItem {
  OpKernel* kernel = nullptr;
  const Node* node = nullptr;
  const DataType* input_types = nullptr;  // kernel->input_types().data()
  int32_t num_inputs = 0;
  int32_t num_outputs = 0;
  // Index of input 0 in a step's input slots; inputs are contiguous.
  int32_t input_start = 0;
  // Edges from other op nodes (data and control) the node waits for.
  int32_t num_pending = 0;
  // [begin, end) ranges in out_edges_ and control_out_.
  int32_t out_edge_begin = 0, out_edge_end = 0;
  int32_t control_begin = 0, control_end = 0;
  bool is_async = false;
  bool is_expensive = false;
  // _Send/_Recv run even when dead, to carry the deadness across devices.
  bool is_transfer = false;
  // For _Recv and Switch an output left unset is dead rather than an error.
  bool unset_output_is_dead = false;
  // A Merge waits for its control inputs and then for the first live data
  // input, or for every data input to be dead (see kMergeLiveShift).
  bool is_merge = false;
};

struct Executor::OutEdge {
  int32_t dst;         // consumer's index in items_
  int32_t src_output;  // producer's output slot
  int32_t dst_slot;    // consumer's absolute input slot
  bool is_last_use;    // the last edge reading src_output may move the value
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

bool IsUnsupportedControlFlow(const Node& n) {
  const std::string& op = n.type_string();
  return op == "RefMerge" || op == "Enter" || op == "RefEnter" || op == "Exit" || op == "RefExit" ||
         op == "NextIteration" || op == "RefNextIteration" || op == "LoopCond";
}

std::string NodePrefix(const Node& n) { return absl::StrCat(FormatNodeForError(n.def()), ": "); }

}  // namespace

// The values and pending counts of one iteration of one frame. A step that
// ends without error leaves every entry cleared, so its state is recycled
// for the next step, which only resets the pending counts.
struct Executor::IterationState {
  // One input slot of a consumer.
  struct Entry {
    Tensor value;
    // A ref input (into a variable's storage) when ref_mu is set.
    Tensor* ref = nullptr;
    absl::Mutex* ref_mu = nullptr;
    bool is_dead = false;
  };

  explicit IterationState(const Executor& exec)
      : entries(new Entry[exec.total_inputs_]),
        pending(new std::atomic<uint64_t>[exec.items_.size()]) {}
  void ResetPendingCounts(const Executor& exec) {
    for (size_t i = 0; i < exec.items_.size(); ++i) {
      pending[i].store(exec.items_[i].num_pending, std::memory_order_relaxed);
    }
  }

  std::unique_ptr<Entry[]> entries;
  std::unique_ptr<std::atomic<uint64_t>[]> pending;
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
  if (state == nullptr) state = std::make_unique<IterationState>(*this);
  state->ResetPendingCounts(*this);
  return state;
}

void Executor::RecycleIterationState(std::unique_ptr<IterationState> state) const {
  // Enough for a few concurrent steps; more would only hold memory.
  constexpr size_t kMaxFree = 4;
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
  // A loop frame. Only the root frame, with one iteration, exists until
  // control flow lands; nodes and values already carry (frame, iteration).
  struct FrameState {
    uint64_t frame_id = 0;
    std::vector<std::unique_ptr<IterationState>> iterations;
    IterationState* iteration(int64_t iter) const { return iterations[iter].get(); }
  };
  struct TaggedNode {
    const NodeItem* item;
    FrameState* frame;
    int64_t iter;
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

  void Process(TaggedNode tagged, int64_t scheduled_micros);
  void AsyncDone(AsyncState* state);
  absl::Status PrepareInputs(const NodeItem& item, IterationState* iter, InputVector* inputs,
                             bool* is_input_dead);
  void ClearInputs(const NodeItem& item, IterationState* iter);
  // Checks the kernel's outputs and hands them to the consumers.
  absl::Status ProcessOutputs(const TaggedNode& tagged, OpKernelContext* ctx, TaggedNodeSeq* ready);
  // ctx is null for a dead node: every output is dead.
  void PropagateOutputs(const TaggedNode& tagged, OpKernelContext* ctx, TaggedNodeSeq* ready);
  // `slot` is the absolute input slot a data edge feeds, -1 for a control
  // edge (only a Merge needs to know which input it is).
  void ActivateNode(int32_t dst, int32_t slot, bool dead, const TaggedNode& from,
                    IterationState* iter, TaggedNodeSeq* ready);
  void ActivateMerge(int32_t dst, int32_t slot, bool dead, const TaggedNode& from,
                     IterationState* iter, TaggedNodeSeq* ready);
  int32_t item_index(const NodeItem& item) const {
    return static_cast<int32_t>(&item - exec_->items_.data());
  }
  // Accounts for one finished node; returns true iff the step is over.
  bool NodeDone(const absl::Status& s, TaggedNodeSeq* ready, ReadyQueue* inline_ready);
  void ScheduleReady(TaggedNodeSeq* ready, ReadyQueue* inline_ready);
  bool ShouldStop();
  void RecordError(const absl::Status& s);
  void Finish();

  const Executor* const exec_;
  const int64_t step_id_;
  Rendezvous* const rendezvous_;
  CancellationManager* const cancellation_manager_;
  StepStatsCollector* const stats_;
  const Runner runner_;
  DoneCallback done_;
  FrameState root_frame_;
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
      done_(std::move(done)) {
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
    ready.push_back(TaggedNode{&exec_->items_[r], &root_frame_, 0, false});
  }
  ScheduleReady(&ready, nullptr);
}

void Executor::StepState::Process(TaggedNode tagged, int64_t scheduled_micros) {
  TaggedNodeSeq ready;
  ReadyQueue inline_ready;
  InputVector inputs;
  inline_ready.push_back(tagged);
  bool completed = false;
  while (!inline_ready.empty()) {
    tagged = inline_ready.pop_front();
    const NodeItem& item = *tagged.item;
    IterationState* iter = tagged.frame->iteration(tagged.iter);
    if (ShouldStop()) {
      completed = NodeDone(absl::OkStatus(), &ready, &inline_ready);
      continue;
    }
    if (tagged.is_dead && !item.is_transfer) {
      // A dead node does not run; its outputs are all dead.
      ClearInputs(item, iter);
      PropagateOutputs(tagged, nullptr, &ready);
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
    params.frame_iter = FrameAndIter{tagged.frame->frame_id, tagged.iter};
    params.runner = &runner_;
    if (item.is_async) {
      // The callback may run before ComputeAsync returns, even finish the
      // step: nothing below touches `this` unless inline_ready holds nodes,
      // which keep the step alive.
      auto* state = new AsyncState(params, tagged, std::move(inputs), std::move(rec));
      inputs.clear();
      if (state->rec != nullptr) state->rec->OpStart();
      item.kernel->AsAsync()->ComputeAsync(&state->ctx, [this, state] { AsyncDone(state); });
      continue;
    }
    OpKernelContext ctx(&params);
    if (rec != nullptr) rec->OpStart();
    // No exception leaves a kernel: one that throws (a failed allocation
    // it did not check) fails its node, not the process.
    try {
      item.kernel->Compute(&ctx);
    } catch (const std::bad_alloc&) {
      ctx.SetStatus(errors::ResourceExhausted("out of memory while computing the node"));
    } catch (const std::exception& e) {
      ctx.SetStatus(errors::Internal("the kernel threw: ", e.what()));
    }
    if (rec != nullptr) rec->OpEnd();
    ClearInputs(item, iter);
    s = ProcessOutputs(tagged, &ctx, &ready);
    if (rec != nullptr) rec->Finish(&ctx, exec_->device_->name(), stats_);
    completed = NodeDone(s, &ready, &inline_ready);
  }
  if (completed) Finish();
}

void Executor::StepState::AsyncDone(AsyncState* state) {
  const TaggedNode& tagged = state->tagged;
  if (state->rec != nullptr) state->rec->OpEnd();
  ClearInputs(*tagged.item, tagged.frame->iteration(tagged.iter));
  TaggedNodeSeq ready;
  const absl::Status s = ProcessOutputs(tagged, &state->ctx, &ready);
  if (state->rec != nullptr) {
    state->rec->Finish(&state->ctx, exec_->device_->name(), stats_);
  }
  delete state;
  if (NodeDone(s, &ready, nullptr)) Finish();
}

absl::Status Executor::StepState::PrepareInputs(const NodeItem& item, IterationState* iter,
                                                InputVector* inputs, bool* is_input_dead) {
  inputs->resize(item.num_inputs);
  Entry* entries = iter->entries.get() + item.input_start;
  if (item.is_merge) {
    // Only the live input is read: the others may not have arrived, and
    // their producers may still be writing their slots.
    const int live =
        MergeLiveInput(iter->pending[item_index(item)].load(std::memory_order_acquire));
    for (int i = 0; i < item.num_inputs; ++i) {
      (*inputs)[i] = i == live ? TensorValue(&entries[i].value) : TensorValue();
    }
    return absl::OkStatus();
  }
  for (int i = 0; i < item.num_inputs; ++i) {
    Entry& e = entries[i];
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
        MergeLiveInput(iter->pending[item_index(item)].load(std::memory_order_acquire));
    if (live >= 0) entries[live].value.Clear();
    return;
  }
  for (int i = 0; i < item.num_inputs; ++i) {
    entries[i].value.Clear();
    entries[i].ref = nullptr;
    entries[i].ref_mu = nullptr;
    entries[i].is_dead = false;
  }
}

absl::Status Executor::StepState::ProcessOutputs(const TaggedNode& tagged, OpKernelContext* ctx,
                                                 TaggedNodeSeq* ready) {
  const NodeItem& item = *tagged.item;
  if (!ctx->status().ok()) {
    return errors::Annotate(ctx->status(), NodePrefix(*item.node));
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
  const NodeItem& item = *tagged.item;
  IterationState* iter = tagged.frame->iteration(tagged.iter);
  const OutEdge* edges = exec_->out_edges_.data();
  for (int32_t k = item.out_edge_begin; k < item.out_edge_end; ++k) {
    const OutEdge& e = edges[k];
    Entry& dst = iter->entries[e.dst_slot];
    bool dead = ctx == nullptr || !ctx->output_is_set(e.src_output);
    if (!dead) {
      const TensorValue v = ctx->output_value(e.src_output);
      if (v.is_ref()) {
        dst.ref = v.tensor;
        dst.ref_mu = v.mutex_if_ref;
      } else if (e.is_last_use) {
        dst.value = std::move(*v.tensor);
      } else {
        dst.value = *v.tensor;
      }
    }
    dst.is_dead = dead;
    ActivateNode(e.dst, e.dst_slot, dead, tagged, iter, ready);
  }
  const int32_t* control = exec_->control_out_.data();
  for (int32_t k = item.control_begin; k < item.control_end; ++k) {
    ActivateNode(control[k], -1, tagged.is_dead, tagged, iter, ready);
  }
}

void Executor::StepState::ActivateNode(int32_t dst, int32_t slot, bool dead, const TaggedNode& from,
                                       IterationState* iter, TaggedNodeSeq* ready) {
  const NodeItem& item = exec_->items_[dst];
  if (item.is_merge) {
    ActivateMerge(dst, slot, dead, from, iter, ready);
    return;
  }
  if (item.num_pending == 1) {
    // The only producer: no one else touches the count.
    ready->push_back(TaggedNode{&item, from.frame, from.iter, dead});
    return;
  }
  // acq_rel: the thread that sees the count reach zero sees every input
  // written before the other producers' decrements.
  const uint64_t delta = dead ? kDeadInput - 1 : ~uint64_t{0};
  const uint64_t now = iter->pending[dst].fetch_add(delta, std::memory_order_acq_rel) + delta;
  if ((now & kPendingMask) == 0) {
    ready->push_back(TaggedNode{&item, from.frame, from.iter, (now >> 32) != 0});
  }
}

void Executor::StepState::ActivateMerge(int32_t dst, int32_t slot, bool dead,
                                        const TaggedNode& from, IterationState* iter,
                                        TaggedNodeSeq* ready) {
  const NodeItem& item = exec_->items_[dst];
  std::atomic<uint64_t>& pending = iter->pending[dst];
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
    if (((now >> 32) & kMergeDeadMask) != static_cast<uint64_t>(item.num_inputs)) {
      return;
    }
    // Every data input is dead: release the slot, and the Merge is dead.
    now = pending.fetch_sub(1, std::memory_order_acq_rel) - 1;
  }
  if ((now & kPendingMask) == 0) {
    ready->push_back(TaggedNode{&item, from.frame, from.iter, MergeLiveInput(now) < 0});
  }
}

bool Executor::StepState::NodeDone(const absl::Status& s, TaggedNodeSeq* ready,
                                   ReadyQueue* inline_ready) {
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
  ScheduleReady(ready, inline_ready);
  return false;
}

void Executor::StepState::ScheduleReady(TaggedNodeSeq* ready, ReadyQueue* inline_ready) {
  const int64_t scheduled = stats_ != nullptr ? NowMicros() : 0;
  auto dispatch = [this, scheduled](const TaggedNode& t) {
    runner_([this, t, scheduled] { Process(t, scheduled); });
  };
  if (inline_ready == nullptr) {
    for (const TaggedNode& t : *ready) dispatch(t);
    ready->clear();
    return;
  }
  if (inline_ready->empty() && std::none_of(ready->begin(), ready->end(), [](const TaggedNode& t) {
        return !t.is_dead && t.item->is_expensive;
      })) {
    // The common case (a chain, a fan-out of cheap nodes): run them all here.
    inline_ready->TakeAll(ready);
    return;
  }
  const TaggedNode* expensive = nullptr;
  for (const TaggedNode& t : *ready) {
    if (t.is_dead || !t.item->is_expensive) {
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
  for (Node* n : graph_->op_nodes()) {
    if (IsUnsupportedControlFlow(*n)) {
      return errors::Unimplemented(
          NodePrefix(*n), "loops (Enter, Exit, NextIteration, LoopCond) are not supported yet");
    }
  }
  DF_RETURN_IF_ERROR(TopologicalOrder(*graph_, &order));

  std::vector<int32_t> index(graph_->num_node_ids(), -1);
  for (size_t i = 0; i < order.size(); ++i) {
    index[order[i]->id()] = static_cast<int32_t>(i);
  }
  items_.resize(order.size());
  kernels_.reserve(order.size());
  int32_t next_input = 0;
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
    item.input_start = next_input;
    next_input += item.num_inputs;
    item.is_async = item.kernel->AsAsync() != nullptr;
    item.is_expensive = item.kernel->IsExpensive();
    item.is_transfer = n->IsSend() || n->IsRecv();
    item.unset_output_is_dead =
        n->IsRecv() || n->type_string() == "Switch" || n->type_string() == "RefSwitch" ||
        n->type_string() == "_SwitchN";
    item.is_merge = n->type_string() == "Merge";
  }
  total_inputs_ = next_input;

  std::vector<bool> has_input;
  std::vector<bool> seen_output;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node* n = order[i];
    NodeItem& item = items_[i];
    has_input.assign(item.num_inputs, false);
    for (const Edge* e : n->in_edges()) {
      if (!e->src()->IsOp()) continue;
      ++item.num_pending;
      if (e->IsControlEdge()) continue;
      if (has_input[e->dst_input()]) {
        return errors::InvalidArgument(NodePrefix(*n), "input ", e->dst_input(), " has two edges");
      }
      has_input[e->dst_input()] = true;
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
