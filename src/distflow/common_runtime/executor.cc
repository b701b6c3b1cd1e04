// Running a step: the ready queue, which nodes run inline and which go to
// the inter-op pool, inputs and outputs of a kernel, pending counts, errors
// and the end of the step. Loop frames are in executor_frames.cc, building
// the executor in executor_build.cc.
#include "distflow/common_runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <new>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/notification.h"
#include "distflow/common_runtime/executor_state.h"
#include "distflow/core/env.h"
#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {

using executor_internal::kDeadInput;
using executor_internal::kMergeDeadMask;
using executor_internal::kMergeLiveShift;
using executor_internal::kPendingMask;
using executor_internal::MergeLiveInput;
using executor_internal::NodePrefix;

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

bool Executor::IsExpensive(const NodeItem& item) const {
  return item.may_be_expensive &&
         cost_nanos_[&item - items_.data()].load(std::memory_order_relaxed) >= kExpensiveNanos;
}

void Executor::RecordCost(const NodeItem& item, int64_t nanos) const {
  std::atomic<int64_t>& cost = cost_nanos_[&item - items_.data()];
  cost.store(executor_internal::FoldCostSample(cost.load(std::memory_order_relaxed), nanos,
                                               kExpensiveNanos),
             std::memory_order_relaxed);
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

Executor::StepState::StepState(const Executor* exec, const Args& args, DoneCallback done)
    : exec_(exec),
      step_id_(args.step_id),
      rendezvous_(args.rendezvous),
      call_frame_(args.call_frame),
      cancellation_manager_(args.cancellation_manager),
      stats_(args.stats_collector),
      runner_(args.runner),
      sample_costs_(
          exec->steps_started_.fetch_add(1, std::memory_order_relaxed) % kCostSampleSteps == 0),
      inline_start_(args.inline_start),
      deadline_(args.deadline),
      done_(std::move(done)) {
  root_frame_.info = &exec->frames_[0];
  root_iter_ = exec->TakeIterationState();
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
    ready.push_back(TaggedNode{&exec_->items_[r], &root_frame_, root_iter_.get(), false});
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
  ReadyQueue inline_ready(&nodes);
  InputVector inputs;
  // What every kernel of the step shares is set once; the rest per node.
  OpKernelContext::Params params;
  params.step_id = step_id_;
  params.device = exec_->device_;
  params.rendezvous = rendezvous_;
  params.call_frame = call_frame_;
  params.cancellation_manager = cancellation_manager_;
  params.runner = &runner_;
  bool completed = false;
  while (!inline_ready.empty()) {
    const TaggedNode& tagged = inline_ready.pop_front();
    TaggedNodeSeq* ready = inline_ready.output();
    const NodeItem& item = *tagged.item;
    IterationState* iter = tagged.iter;
    if (ShouldStop()) {
      completed = NodeDone(absl::OkStatus(), ready, &inline_ready);
      continue;
    }
    // Every iteration of a loop passes a NextIteration: there an endless
    // loop meets the step's deadline, whichever thread runs it.
    if (item.loop_role == LoopRole::kNextIteration && deadline_ != absl::InfiniteFuture() &&
        absl::Now() > deadline_) {
      completed = NodeDone(
          errors::DeadlineExceeded("Step ", step_id_, " passed its deadline in iteration ",
                                   iter->iter, " of frame '", tagged.frame->info->name, "'"),
          ready, &inline_ready);
      continue;
    }
    if (tagged.is_dead && !item.is_transfer) {
      // A dead node does not run; its outputs are all dead.
      ClearInputs(item, iter);
      PropagateOutputs(tagged, nullptr, ready);
      completed = NodeDone(absl::OkStatus(), ready, &inline_ready);
      continue;
    }
    if (item.const_output != nullptr && stats_ == nullptr) {
      ActivateEdges(item, false, tagged.frame, iter, ready, [&item](const OutEdge&, Entry* dst) {
        dst->const_value = item.const_output;
        return false;
      });
      completed = NodeDone(absl::OkStatus(), ready, &inline_ready);
      continue;
    }
    std::unique_ptr<NodeStatsRecorder> rec;
    if (stats_ != nullptr) {
      rec = std::make_unique<NodeStatsRecorder>(item.node->name(), scheduled_micros);
    }
    bool is_input_dead = false;
    absl::Status s = PrepareInputs(item, iter, &inputs, &is_input_dead);
    if (!s.ok()) {
      completed = NodeDone(s, ready, &inline_ready);
      continue;
    }
    PrefetchConsumers(item);
    params.op_kernel = item.kernel;
    params.inputs = inputs.data();
    params.num_inputs = item.num_inputs;
    params.is_input_dead = is_input_dead;
    params.frame_iter = FrameAndIter{tagged.frame->frame_id, iter->iter};
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
    s = ProcessOutputs(tagged, &ctx, ready);
    if (rec != nullptr) rec->Finish(&ctx, exec_->device_->name(), stats_);
    completed = NodeDone(s, ready, &inline_ready);
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

namespace {

// A value in the node's own input slot, which ClearInputs drops after the
// kernel: the kernel may move it into an output.
TensorValue OwnedValue(Tensor* t) {
  TensorValue v(t);
  v.owned = true;
  return v;
}

}  // namespace

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
        (*inputs)[i] = OwnedValue(&entries[i].value);
      }
    }
    return absl::OkStatus();
  }
  int i = 0;
  if (!item.has_ref_input) {
    // Values only, until a slot holds a ref (a value consumer of a
    // variable), which the general loop below snapshots.
    for (; i < item.num_inputs; ++i) {
      Entry& e = entries[i];
      if (e.ref_mu != nullptr) break;
      *is_input_dead |= e.is_dead;
      // A Const's output is never dead and never forwarded (see
      // NodeItem::const_output).
      (*inputs)[i] = e.const_value != nullptr ? TensorValue(const_cast<Tensor*>(e.const_value))
                                              : OwnedValue(&e.value);
    }
  }
  for (; i < item.num_inputs; ++i) {
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
    (*inputs)[i] = OwnedValue(&e.value);
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
    if (!v.is_ref() && v.tensor->dtype() != item.output_types[i]) {
      return errors::Internal(NodePrefix(*item.node), "output ", i, " is ",
                              DataTypeString(v.tensor->dtype()), " but the op declares ",
                              DataTypeString(item.output_types[i]));
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

void Executor::StepState::PrefetchConsumers(const NodeItem& item) const {
  // A few are enough for a chain or a short fan-out; a wide fan-out streams
  // through items_ in order, which the hardware prefetches on its own.
  constexpr int32_t kMaxPrefetched = 2;
  const OutEdge* edges = exec_->out_edges_.data();
  const int32_t end = std::min(item.out_edge_end, item.out_edge_begin + kMaxPrefetched);
  for (int32_t k = item.out_edge_begin; k < end; ++k) {
    __builtin_prefetch(&exec_->items_[edges[k].dst]);
  }
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
    PushReady(item, frame, iter, dead, ready);
    return;
  }
  // acq_rel: the thread that sees the count reach zero sees every input
  // written before the other producers' decrements.
  const uint64_t delta = dead ? kDeadInput - 1 : ~uint64_t{0};
  const uint64_t now =
      iter->pending[item.pending_index].fetch_add(delta, std::memory_order_acq_rel) + delta;
  if ((now & kPendingMask) == 0) {
    PushReady(item, frame, iter, (now >> 32) != 0, ready);
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
    PushReady(item, frame, iter, MergeLiveInput(now) < 0, ready);
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
  if (inline_ready != nullptr && inline_ready->empty() &&
      std::none_of(ready->begin(), ready->end(), [this](const TaggedNode& t) {
        return !t.is_dead && exec_->IsExpensive(*t.item);
      })) {
    // The common case (a chain, a fan-out of cheap nodes): run them all here.
    inline_ready->TakeAll(ready);
    return;
  }
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
    exec_->RecycleIterationState(std::move(root_iter_));
  }
  DoneCallback done = std::move(done_);
  delete this;
  done(s);
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
