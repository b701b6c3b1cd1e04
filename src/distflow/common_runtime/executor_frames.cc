// Loop frames and iterations of a step: how Enter, Exit and NextIteration
// move values within and between frame instances, and when an iteration and
// a frame end (see executor.h for the rules).
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "distflow/common_runtime/executor.h"
#include "distflow/common_runtime/executor_state.h"

namespace distflow {

using executor_internal::StableHash;

namespace {

// The id of the instance of a frame entered in iteration `parent_iter` of
// the frame instance `parent_id`: what rendezvous keys carry as frame_id.
uint64_t ChildFrameId(uint64_t parent_id, int64_t parent_iter, uint64_t name_hash) {
  const uint64_t parts[3] = {parent_id, static_cast<uint64_t>(parent_iter), name_hash};
  return StableHash(parts, sizeof(parts));
}

}  // namespace

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

}  // namespace distflow
