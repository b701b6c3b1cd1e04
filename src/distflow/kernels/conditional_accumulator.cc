#include "distflow/kernels/conditional_accumulator.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {

// One parked TakeGradient. Holds a reference to its accumulator.
struct ConditionalAccumulator::Take {
  int64_t id = 0;
  int num_required = 0;
  RefPtr<ConditionalAccumulator> accumulator;
  CancellationManager* cm = nullptr;
  CancellationToken token = 0;
  bool registered = false;
  absl::Status status;
  Tensor result;
  TakeCallback done;
};

namespace {

template <typename T>
void AddInto(Tensor* sum, const Tensor& grad) {
  auto dst = sum->flat<T>();
  auto src = grad.flat<T>();
  for (size_t i = 0; i < dst.size(); ++i) dst[i] += src[i];
}

template <typename T>
void DivideBy(Tensor* t, int n) {
  for (T& v : t->flat<T>()) v /= static_cast<T>(n);
}

}  // namespace

ConditionalAccumulator::ConditionalAccumulator(std::string name, DataType dtype,
                                               PartialTensorShape shape, std::string reduction_type)
    : name_(std::move(name)),
      dtype_(dtype),
      shape_(std::move(shape)),
      reduction_type_(std::move(reduction_type)) {}

ConditionalAccumulator::~ConditionalAccumulator() = default;

absl::Status ConditionalAccumulator::MatchesAttrs(DataType dtype, const PartialTensorShape& shape,
                                                  const std::string& reduction_type) const {
  if (dtype != dtype_ || !shape.IsIdenticalTo(shape_) || reduction_type != reduction_type_) {
    return errors::InvalidArgument("Shared accumulator '", name_, "' is ", DataTypeString(dtype_),
                                   " ", shape_.DebugString(), " ", reduction_type_,
                                   " but was requested as ", DataTypeString(dtype), " ",
                                   shape.DebugString(), " ", reduction_type);
  }
  return absl::OkStatus();
}

absl::Status ConditionalAccumulator::TryApplyGrad(int64_t local_step, const Tensor& grad) {
  if (grad.dtype() != dtype_) {
    return errors::InvalidArgument("Accumulator '", name_, "' is ", DataTypeString(dtype_),
                                   ", got a ", DataTypeString(grad.dtype()), " gradient");
  }
  if (!shape_.IsCompatibleWith(grad.shape())) {
    return errors::InvalidArgument("Accumulator '", name_, "' has shape ", shape_.DebugString(),
                                   ", got a gradient of shape ", grad.shape().DebugString());
  }
  TakeList done;
  {
    absl::MutexLock l(&mu_);
    if (local_step < global_step_) return absl::OkStatus();  // stale
    if (counter_ > 0 && grad.shape() != sum_.shape()) {
      return errors::InvalidArgument("Accumulator '", name_, "' holds gradients of shape ",
                                     sum_.shape().DebugString(), ", got a gradient of shape ",
                                     grad.shape().DebugString());
    }
    if (counter_ == 0) {
      sum_ = grad.DeepCopy();
    } else if (dtype_ == DT_FLOAT) {
      AddInto<float>(&sum_, grad);
    } else {
      AddInto<double>(&sum_, grad);
    }
    ++counter_;
    FlushLocked(&done);
  }
  RunDone(&done);
  return absl::OkStatus();
}

void ConditionalAccumulator::TryTakeGrad(int num_required, CancellationManager* cm,
                                         TakeCallback done_callback) {
  auto take = std::make_unique<Take>();
  take->num_required = num_required;
  take->cm = cm;
  take->done = std::move(done_callback);
  TakeList done;
  {
    absl::MutexLock l(&mu_);
    Ref();
    take->accumulator.reset(this);
    take->id = next_id_++;
    if (num_required < 1) {
      take->status =
          errors::InvalidArgument("Argument num_required must be positive, but was ", num_required);
      done.push_back(std::move(take));
    } else {
      if (cm != nullptr) {
        take->token = cm->get_cancellation_token();
        take->registered = cm->RegisterCallback(take->token, [this, id = take->id] { Cancel(id); });
        if (!take->registered) {
          take->status =
              errors::Cancelled("TakeGradient from accumulator '", name_, "' was cancelled");
          done.push_back(std::move(take));
        }
      }
      if (take != nullptr) {
        takes_.push_back(std::move(take));
        FlushLocked(&done);
      }
    }
  }
  RunDone(&done);
}

void ConditionalAccumulator::FlushLocked(TakeList* done) {
  while (!takes_.empty() && counter_ >= takes_.front()->num_required) {
    Take* take = takes_.front().get();
    take->result = std::move(sum_);
    sum_ = Tensor();
    if (reduction_type_ == "MEAN") {
      if (dtype_ == DT_FLOAT) {
        DivideBy<float>(&take->result, counter_);
      } else {
        DivideBy<double>(&take->result, counter_);
      }
    }
    counter_ = 0;
    ++global_step_;
    done->splice(done->end(), takes_, takes_.begin());
  }
}

void ConditionalAccumulator::Cancel(int64_t id) {
  TakeList done;
  {
    absl::MutexLock l(&mu_);
    for (auto it = takes_.begin(); it != takes_.end(); ++it) {
      if ((*it)->id != id) continue;
      (*it)->status =
          errors::Cancelled("TakeGradient from accumulator '", name_, "' was cancelled");
      done.splice(done.end(), takes_, it);
      break;
    }
    // A later take may need fewer gradients than the cancelled one did.
    FlushLocked(&done);
  }
  RunDone(&done);
}

void ConditionalAccumulator::RunDone(TakeList* done) {
  for (std::unique_ptr<Take>& take : *done) {
    if (take->registered) take->cm->DeregisterCallback(take->token);
    take->done(take->status, std::move(take->result));
    take.reset();  // may drop the last reference to the accumulator
  }
  done->clear();
}

int ConditionalAccumulator::num_accumulated() const {
  absl::MutexLock l(&mu_);
  return counter_;
}

void ConditionalAccumulator::SetGlobalStep(int64_t new_global_step) {
  absl::MutexLock l(&mu_);
  global_step_ = new_global_step;
}

std::string ConditionalAccumulator::DebugString() const {
  absl::MutexLock l(&mu_);
  return absl::StrCat("ConditionalAccumulator '", name_, "' ", DataTypeString(dtype_), " ",
                      shape_.DebugString(), " accumulated=", counter_,
                      " global_step=", global_step_);
}

}  // namespace distflow
