#include "distflow/kernels/var.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {

std::string Var::DebugString() const {
  absl::ReaderMutexLock l(&mu_);
  return absl::StrCat("Var<", DataTypeString(dtype_), " ",
                      tensor_.IsInitialized() ? tensor_.shape().DebugString() : "uninitialized",
                      ">");
}

int64_t Var::MemoryUsed() const {
  absl::ReaderMutexLock l(&mu_);
  return tensor_.IsInitialized() ? static_cast<int64_t>(tensor_.TotalBytes()) : 0;
}

absl::Status UninitializedVariable(const ResourceHandle& handle) {
  return errors::FailedPrecondition("Variable '", handle.name(), "' (container ",
                                    handle.container(), ") is uninitialized");
}

absl::StatusOr<RefPtr<Var>> LookupVariable(OpKernelContext* ctx, const ResourceHandle& handle) {
  absl::StatusOr<RefPtr<Var>> var = LookupResource<Var>(ctx, handle);
  if (absl::IsNotFound(var.status())) return UninitializedVariable(handle);
  return var;
}

void PrepareToUpdate(Tensor* t) {
  if (!t->RefCountIsOne()) *t = t->DeepCopy();
}

MultiMutexLock::MultiMutexLock(std::vector<absl::Mutex*> mutexes) : mutexes_(std::move(mutexes)) {
  std::sort(mutexes_.begin(), mutexes_.end());
  mutexes_.erase(std::unique(mutexes_.begin(), mutexes_.end()), mutexes_.end());
  for (absl::Mutex* mu : mutexes_) mu->Lock();
}

MultiMutexLock::~MultiMutexLock() {
  for (auto it = mutexes_.rbegin(); it != mutexes_.rend(); ++it) (*it)->Unlock();
}

std::vector<DataType> VariableNumberTypes() { return {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64}; }

}  // namespace distflow
