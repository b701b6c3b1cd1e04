#include "distflow/kernels/fifo_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"
#include "distflow/kernels/element_copy.h"

namespace distflow {

// One parked enqueue or dequeue. Holds a reference to its queue, so a queue
// lives as long as anyone waits on it.
struct FIFOQueue::Attempt {
  int64_t id = 0;
  RefPtr<FIFOQueue> queue;
  CancellationManager* cm = nullptr;
  CancellationToken token = 0;
  bool registered = false;
  absl::Status status;
  // Enqueue: the elements not added yet.
  std::deque<Tuple> pending;
  DoneCallback enqueue_done;
  // Dequeue: how many elements, whether to stack them, what was taken.
  int64_t wanted = 0;
  bool many = false;
  std::vector<Tuple> taken;
  Tuple result;
  DequeueCallback dequeue_done;
};

FIFOQueue::FIFOQueue(std::string name, DataTypeVector component_types,
                     std::vector<PartialTensorShape> shapes, int64_t capacity)
    : name_(std::move(name)),
      component_types_(std::move(component_types)),
      shapes_(std::move(shapes)),
      capacity_(capacity) {}

FIFOQueue::~FIFOQueue() = default;

absl::Status FIFOQueue::MatchesAttrs(const DataTypeVector& component_types,
                                     const std::vector<PartialTensorShape>& shapes,
                                     int64_t capacity) const {
  if (component_types != component_types_) {
    return errors::InvalidArgument(
        "Shared queue '", name_, "' has component types ", DataTypeSliceString(component_types_),
        " but requested component types were ", DataTypeSliceString(component_types));
  }
  bool same_shapes = shapes.size() == shapes_.size();
  for (size_t i = 0; same_shapes && i < shapes.size(); ++i) {
    same_shapes = shapes[i].IsIdenticalTo(shapes_[i]);
  }
  if (!same_shapes) {
    return errors::InvalidArgument("Shared queue '", name_,
                                   "' was created with other component shapes");
  }
  if (capacity != capacity_) {
    return errors::InvalidArgument("Shared queue '", name_, "' has capacity ", capacity_,
                                   " but requested capacity was ", capacity);
  }
  return absl::OkStatus();
}

absl::Status FIFOQueue::CheckComponentTypes(DataTypeSlice types) const {
  if (types == DataTypeSlice(component_types_)) {
    return absl::OkStatus();
  }
  return errors::InvalidArgument("Queue '", name_, "' has component types ",
                                 DataTypeSliceString(component_types_), " but the op expects ",
                                 DataTypeSliceString(types));
}

absl::Status FIFOQueue::ValidateTuple(const Tuple& tuple, bool batched) const {
  if (tuple.size() != component_types_.size()) {
    return errors::InvalidArgument("Queue '", name_, "' has ", component_types_.size(),
                                   " components, got ", tuple.size());
  }
  for (size_t i = 0; i < tuple.size(); ++i) {
    const Tensor& t = tuple[i];
    if (t.dtype() != component_types_[i]) {
      return errors::InvalidArgument("Queue '", name_, "' component ", i, " is ",
                                     DataTypeString(component_types_[i]), ", got ",
                                     DataTypeString(t.dtype()));
    }
    TensorShape element = t.shape();
    if (batched) {
      if (t.dims() < 1) {
        return errors::InvalidArgument("EnqueueMany on queue '", name_, "': component ", i,
                                       " must have a batch dimension, got shape ",
                                       t.shape().DebugString());
      }
      if (t.dim_size(0) != tuple[0].dim_size(0)) {
        return errors::InvalidArgument("EnqueueMany on queue '", name_, "': component ", i, " has ",
                                       t.dim_size(0), " elements but component 0 has ",
                                       tuple[0].dim_size(0));
      }
      element.RemoveDim(0);
    }
    if (!shapes_.empty() && !shapes_[i].IsCompatibleWith(element)) {
      return errors::InvalidArgument("Queue '", name_, "' component ", i, " has shape ",
                                     shapes_[i].DebugString(), ", got an element of shape ",
                                     element.DebugString());
    }
  }
  return absl::OkStatus();
}

void FIFOQueue::TryEnqueue(Tuple tuple, CancellationManager* cm, DoneCallback done) {
  auto a = std::make_unique<Attempt>();
  a->cm = cm;
  a->pending.push_back(std::move(tuple));
  a->enqueue_done = std::move(done);
  AddAttempt(std::move(a), /*is_enqueue=*/true);
}

void FIFOQueue::TryEnqueueMany(const Tuple& tuple, CancellationManager* cm, DoneCallback done) {
  auto a = std::make_unique<Attempt>();
  a->cm = cm;
  const int64_t batch = tuple[0].dim_size(0);
  for (int64_t j = 0; j < batch; ++j) {
    Tuple element(tuple.size());
    for (size_t i = 0; i < tuple.size(); ++i) {
      TensorShape shape = tuple[i].shape();
      shape.RemoveDim(0);
      element[i].CopyFrom(tuple[i].Slice(j, j + 1), shape);
    }
    a->pending.push_back(std::move(element));
  }
  a->enqueue_done = std::move(done);
  AddAttempt(std::move(a), /*is_enqueue=*/true);
}

void FIFOQueue::TryDequeue(CancellationManager* cm, DequeueCallback done) {
  auto a = std::make_unique<Attempt>();
  a->cm = cm;
  a->wanted = 1;
  a->dequeue_done = std::move(done);
  AddAttempt(std::move(a), /*is_enqueue=*/false);
}

void FIFOQueue::TryDequeueMany(int64_t n, CancellationManager* cm, DequeueCallback done) {
  auto a = std::make_unique<Attempt>();
  a->cm = cm;
  a->wanted = n;
  a->many = true;
  a->dequeue_done = std::move(done);
  AddAttempt(std::move(a), /*is_enqueue=*/false);
}

void FIFOQueue::AddAttempt(std::unique_ptr<Attempt> a, bool is_enqueue) {
  AttemptList done;
  {
    absl::MutexLock l(&mu_);
    Ref();
    a->queue.reset(this);
    a->id = next_id_++;
    if (is_enqueue && closed_) {
      a->status = errors::Cancelled("FIFOQueue '", name_, "' is closed.");
      done.push_back(std::move(a));
    } else {
      if (a->cm != nullptr) {
        a->token = a->cm->get_cancellation_token();
        a->registered = a->cm->RegisterCallback(a->token, [this, id = a->id] { Cancel(id); });
        if (!a->registered) {
          a->status = errors::Cancelled(is_enqueue ? "Enqueue" : "Dequeue",
                                        " operation on FIFOQueue '", name_, "' was cancelled");
          done.push_back(std::move(a));
        }
      }
      if (a != nullptr) {
        (is_enqueue ? enqueue_attempts_ : dequeue_attempts_).push_back(std::move(a));
        FlushLocked(&done);
      }
    }
  }
  RunDone(&done);
}

void FIFOQueue::FlushLocked(AttemptList* done) {
  bool progress = true;
  while (progress) {
    progress = false;
    while (!enqueue_attempts_.empty()) {
      Attempt* a = enqueue_attempts_.front().get();
      while (!a->pending.empty() &&
             (capacity_ < 0 || static_cast<int64_t>(queue_.size()) < capacity_)) {
        queue_.push_back(std::move(a->pending.front()));
        a->pending.pop_front();
        progress = true;
      }
      if (!a->pending.empty()) break;
      done->splice(done->end(), enqueue_attempts_, enqueue_attempts_.begin());
    }
    while (!dequeue_attempts_.empty()) {
      Attempt* a = dequeue_attempts_.front().get();
      while (static_cast<int64_t>(a->taken.size()) < a->wanted && !queue_.empty()) {
        a->taken.push_back(std::move(queue_.front()));
        queue_.pop_front();
        progress = true;
      }
      if (static_cast<int64_t>(a->taken.size()) == a->wanted) {
        if (a->many) {
          a->status = Stack(a->taken, &a->result);
        } else {
          a->result = std::move(a->taken[0]);
        }
        a->taken.clear();
        done->splice(done->end(), dequeue_attempts_, dequeue_attempts_.begin());
        continue;
      }
      // Closed, and no pending enqueue can bring more: give back and fail.
      if (closed_ && enqueue_attempts_.empty()) {
        RestoreLocked(a);
        a->status = errors::OutOfRange("FIFOQueue '", name_,
                                       "' is closed and has insufficient elements "
                                       "(requested ",
                                       a->wanted, ", current size ", queue_.size(), ")");
        done->splice(done->end(), dequeue_attempts_, dequeue_attempts_.begin());
        progress = true;
        continue;
      }
      break;
    }
  }
}

void FIFOQueue::RestoreLocked(Attempt* a) {
  for (auto it = a->taken.rbegin(); it != a->taken.rend(); ++it) {
    queue_.push_front(std::move(*it));
  }
  a->taken.clear();
}

void FIFOQueue::Cancel(int64_t id) {
  AttemptList done;
  {
    absl::MutexLock l(&mu_);
    for (AttemptList* list : {&enqueue_attempts_, &dequeue_attempts_}) {
      for (auto it = list->begin(); it != list->end(); ++it) {
        Attempt* a = it->get();
        if (a->id != id) continue;
        const bool is_enqueue = list == &enqueue_attempts_;
        if (!is_enqueue) RestoreLocked(a);
        a->status = errors::Cancelled(is_enqueue ? "Enqueue" : "Dequeue",
                                      " operation on FIFOQueue '", name_, "' was cancelled");
        done.splice(done.end(), *list, it);
        break;
      }
      if (!done.empty()) break;
    }
    // Elements given back, or an enqueue no longer at the head, may let
    // other attempts finish.
    if (!done.empty()) FlushLocked(&done);
  }
  RunDone(&done);
}

void FIFOQueue::RunDone(AttemptList* done) {
  for (std::unique_ptr<Attempt>& a : *done) {
    // Returns false at once inside the cancel callback itself; otherwise
    // waits for a callback running on another thread, which then finds
    // nothing to cancel.
    if (a->registered) a->cm->DeregisterCallback(a->token);
    if (a->enqueue_done) {
      a->enqueue_done(a->status);
    } else {
      a->dequeue_done(a->status, std::move(a->result));
    }
    a.reset();  // may drop the last reference to the queue
  }
  done->clear();
}

void FIFOQueue::Close(bool cancel_pending_enqueues) {
  AttemptList done;
  {
    absl::MutexLock l(&mu_);
    closed_ = true;
    if (cancel_pending_enqueues) {
      for (std::unique_ptr<Attempt>& a : enqueue_attempts_) {
        a->status =
            errors::Cancelled("FIFOQueue '", name_, "' was closed, cancelling pending enqueues");
      }
      done.splice(done.end(), enqueue_attempts_);
    }
    FlushLocked(&done);
  }
  RunDone(&done);
}

int64_t FIFOQueue::size() const {
  absl::MutexLock l(&mu_);
  return static_cast<int64_t>(queue_.size());
}

absl::Status FIFOQueue::Stack(const std::vector<Tuple>& elements, Tuple* out) const {
  out->assign(component_types_.size(), Tensor());
  for (size_t i = 0; i < component_types_.size(); ++i) {
    TensorShape element;
    if (!elements.empty()) {
      element = elements[0][i].shape();
    } else if (shapes_.empty() || !shapes_[i].AsTensorShape(&element)) {
      return errors::InvalidArgument("DequeueMany on queue '", name_,
                                     "' needs fully defined component shapes");
    }
    TensorShape batched;
    DF_RETURN_IF_ERROR(batched.AddDimWithStatus(static_cast<int64_t>(elements.size())));
    for (int64_t d : element.dim_sizes()) {
      DF_RETURN_IF_ERROR(batched.AddDimWithStatus(d));
    }
    Tensor t;
    DF_RETURN_IF_ERROR(Tensor::Allocate(component_types_[i], batched, &t));
    const int64_t count = element.num_elements();
    for (size_t j = 0; j < elements.size(); ++j) {
      const Tensor& e = elements[j][i];
      if (e.shape() != element) {
        return errors::InvalidArgument("DequeueMany on queue '", name_, "': component ", i,
                                       " has elements of shapes ", element.DebugString(), " and ",
                                       e.shape().DebugString());
      }
      CopyElements(t.dtype(), e.raw_data(), count, ElementAt(t, static_cast<int64_t>(j) * count));
    }
    (*out)[i] = std::move(t);
  }
  return absl::OkStatus();
}

std::string FIFOQueue::DebugString() const {
  absl::MutexLock l(&mu_);
  return absl::StrCat("FIFOQueue '", name_, "' size=", queue_.size(), " capacity=", capacity_,
                      closed_ ? " closed" : "");
}

}  // namespace distflow
