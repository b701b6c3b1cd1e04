// Variables as the state kernels share: Var, the value of a resource
// variable (VarHandleOp & co.), and LegacyVar, the storage behind a
// reference variable (VariableV2), each a tensor guarded by a mutex and kept
// in the device's ResourceMgr. Plus the helpers the variable and training
// kernels share: looking a variable up from a handle input with the errors
// users see, copy-on-write before an in-place update, and locking several
// variables without deadlock.
//
// Readers take the mutex shared and keep the value by sharing its buffer;
// writers take it exclusively and call PrepareToUpdate before changing
// elements in place, so a value a reader already holds never changes under
// it. Kernels always lock (use_locking=false is accepted and still locks).
#ifndef DISTFLOW_KERNELS_VAR_H_
#define DISTFLOW_KERNELS_VAR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "distflow/framework/op_kernel.h"
#include "distflow/framework/resource_mgr.h"
#include "distflow/framework/tensor.h"

namespace distflow {

class Var : public ResourceBase {
 public:
  explicit Var(DataType dtype) : dtype_(dtype) {}

  DataType dtype() const { return dtype_; }
  absl::Mutex* mu() const { return &mu_; }
  // The value: uninitialized (IsInitialized() false) until first assigned.
  // REQUIRES: mu() held, shared to read, exclusively to replace or update.
  Tensor* tensor() { return &tensor_; }

  // "Var<float32 [2,3]>" (locks mu()).
  std::string DebugString() const override;
  // The value's bytes; 0 while uninitialized (locks mu()).
  int64_t MemoryUsed() const override;

 private:
  const DataType dtype_;
  mutable absl::Mutex mu_;
  Tensor tensor_;
};

// The storage of a VariableV2: a distinct resource type, so a reference
// variable and a resource variable of the same name never meet.
class LegacyVar final : public Var {
 public:
  using Var::Var;
};

// FailedPrecondition "Variable 'w' (container localhost) is uninitialized".
absl::Status UninitializedVariable(const ResourceHandle& handle);

// The variable `handle` names: FailedPrecondition (UninitializedVariable)
// when it does not exist, InvalidArgument when the handle names a resource
// of another type or device.
absl::StatusOr<RefPtr<Var>> LookupVariable(OpKernelContext* ctx, const ResourceHandle& handle);

// Makes `*t` safe to update in place: when another tensor shares its buffer
// (a reader's snapshot, the value it was assigned from), replaces it with a
// private copy. REQUIRES: the owning mutex held exclusively; t initialized.
void PrepareToUpdate(Tensor* t);

// Holds the given mutexes exclusively, locked in address order with
// duplicates skipped, so kernels that update several variables at once
// (var and its slots) cannot deadlock against each other.
class MultiMutexLock {
 public:
  explicit MultiMutexLock(std::vector<absl::Mutex*> mutexes);
  ~MultiMutexLock();
  MultiMutexLock(const MultiMutexLock&) = delete;
  MultiMutexLock& operator=(const MultiMutexLock&) = delete;

 private:
  std::vector<absl::Mutex*> mutexes_;
};

// Element types variable updates compute on.
std::vector<DataType> VariableNumberTypes();

}  // namespace distflow

#endif  // DISTFLOW_KERNELS_VAR_H_
