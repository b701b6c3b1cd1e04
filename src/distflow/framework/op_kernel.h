// Kernels: the code that computes an op on one device. An OpKernel is built
// once per node (from an OpKernelConstruction) and then its Compute runs once
// per step with an OpKernelContext holding that step's inputs and outputs.
// Compute may be called concurrently from several steps, so kernels keep no
// per-step state in members. AsyncOpKernel finishes later, through a callback
// (e.g. _Recv waiting for its tensor).
#ifndef DISTFLOW_FRAMEWORK_OP_KERNEL_H_
#define DISTFLOW_FRAMEWORK_OP_KERNEL_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/status.h"
#include "distflow/framework/device_base.h"
#include "distflow/framework/node_def_util.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/types.h"

namespace distflow {

class AsyncOpKernel;
class CallFrame;
class CancellationManager;
class FunctionLibraryRuntime;
class Rendezvous;
class ThreadPool;

// A tensor given to a kernel, with the mutex guarding it when it is a
// reference (a ref-typed edge into a variable's storage).
struct TensorValue {
  TensorValue() = default;
  explicit TensorValue(Tensor* t) : tensor(t) {}
  TensorValue(absl::Mutex* mu, Tensor* t) : tensor(t), mutex_if_ref(mu) {}
  bool is_ref() const { return mutex_if_ref != nullptr; }
  Tensor* operator->() const { return tensor; }

  Tensor* tensor = nullptr;
  absl::Mutex* mutex_if_ref = nullptr;
  // True when the tensor is a value held for this one kernel alone and
  // dropped after it runs (the executor's input slot): the context may move
  // it into an output instead of sharing it (forward_input_to_output).
  bool owned = false;
};

// The loop frame and iteration a tensor belongs to; (0, 0) outside loops.
struct FrameAndIter {
  uint64_t frame_id = 0;
  int64_t iter_id = 0;
};

class OpKernelConstruction {
 public:
  // `function_library` (may be null) is the runtime of `device` for the
  // graph's function library; it outlives the kernel.
  OpKernelConstruction(DeviceBase* device, const NodeDef& def, const OpDef& op_def,
                       DataTypeSlice input_types, DataTypeSlice output_types,
                       FunctionLibraryRuntime* function_library = nullptr);

  const NodeDef& def() const { return def_; }
  const OpDef& op_def() const { return op_def_; }
  const std::string& name() const { return def_.name(); }
  DeviceBase* device() const { return device_; }
  const std::string& device_type() const { return device_->device_type(); }
  // Calls library functions on this device (for kernels with `func`
  // attrs); nullptr when the graph has no function library.
  FunctionLibraryRuntime* function_library() const { return function_library_; }

  template <typename T>
  absl::Status GetAttr(absl::string_view name, T* value) const {
    return GetNodeAttr(AttrSlice(def_), name, value);
  }
  bool HasAttr(absl::string_view name) const { return HasNodeAttr(def_, name); }

  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  DataTypeSlice input_types() const { return input_types_; }
  DataTypeSlice output_types() const { return output_types_; }

  // Records a construction failure; the first one wins.
  void SetStatus(const absl::Status& s) {
    if (status_.ok()) status_ = s;
  }
  const absl::Status& status() const { return status_; }

 private:
  DeviceBase* device_;
  const NodeDef& def_;
  const OpDef& op_def_;
  DataTypeSlice input_types_, output_types_;
  FunctionLibraryRuntime* function_library_;
  absl::Status status_;
};

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction* ctx);
  virtual ~OpKernel();
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  virtual void Compute(class OpKernelContext* ctx) = 0;
  virtual AsyncOpKernel* AsAsync() { return nullptr; }
  // The executor's hint: cheap kernels run inline on the scheduling thread,
  // expensive ones are handed to the inter-op pool.
  virtual bool IsExpensive() { return expensive_; }

  const NodeDef& def() const { return def_; }
  const std::string& name() const { return def_.name(); }
  const std::string& type_string() const { return def_.op(); }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }
  // The function runtime the kernel was built with (may be null).
  FunctionLibraryRuntime* function_library() const { return function_library_; }

 protected:
  void set_expensive(bool expensive) { expensive_ = expensive; }

 private:
  const NodeDef def_;
  const DataTypeVector input_types_, output_types_;
  FunctionLibraryRuntime* const function_library_;
  bool expensive_ = true;
};

class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void()>;

  // Must call `done` exactly once, after setting outputs or status.
  virtual void ComputeAsync(OpKernelContext* ctx, DoneCallback done) = 0;
  AsyncOpKernel* AsAsync() final { return this; }
  // Runs ComputeAsync and blocks until it is done.
  void Compute(OpKernelContext* ctx) final;
};

class OpKernelContext {
 public:
  // What the executor supplies for one kernel invocation. Pointers are
  // borrowed and outlive the context.
  struct Params {
    int64_t step_id = 0;
    OpKernel* op_kernel = nullptr;
    DeviceBase* device = nullptr;
    const TensorValue* inputs = nullptr;  // num_inputs entries
    int num_inputs = 0;
    // True when an input is a dead tensor (control flow); ops that accept
    // dead inputs (Merge) read it.
    bool is_input_dead = false;
    Rendezvous* rendezvous = nullptr;
    CancellationManager* cancellation_manager = nullptr;
    FrameAndIter frame_iter;
    // The run's arguments and results, for _Arg and _Retval; null when the
    // graph takes its feeds and gives its fetches through the rendezvous.
    CallFrame* call_frame = nullptr;
    // Runs a closure on the inter-op pool (for kernels that spawn work).
    const std::function<void(std::function<void()>)>* runner = nullptr;
  };

  explicit OpKernelContext(Params* params)
      : params_(params), outputs_(params->op_kernel->num_outputs()) {}

  Params* params() const { return params_; }
  OpKernel& op_kernel() const { return *params_->op_kernel; }
  int64_t step_id() const { return params_->step_id; }
  DeviceBase* device() const { return params_->device; }
  ThreadPool* intra_op_threadpool() const { return params_->device->intra_op_threadpool(); }
  Rendezvous* rendezvous() const { return params_->rendezvous; }
  CancellationManager* cancellation_manager() const { return params_->cancellation_manager; }
  const FrameAndIter& frame_iter() const { return params_->frame_iter; }
  CallFrame* call_frame() const { return params_->call_frame; }
  // The kernel's function runtime (see OpKernelConstruction); may be null.
  FunctionLibraryRuntime* function_library() const { return op_kernel().function_library(); }

  int num_inputs() const { return params_->num_inputs; }
  DataType input_dtype(int i) const { return op_kernel().input_type(i); }
  // The value of input i (a ref input is read under its mutex's protection
  // by the caller when needed).
  const Tensor& input(int i) const { return *params_->inputs[i].tensor; }
  // False for an input that carries no value: a dead input of a Merge (the
  // only kernel the executor runs with dead inputs).
  bool has_input(int i) const { return params_->inputs[i].tensor != nullptr; }
  bool input_is_ref(int i) const { return params_->inputs[i].is_ref(); }
  absl::Mutex* input_ref_mutex(int i) const { return params_->inputs[i].mutex_if_ref; }
  // The tensor a ref input refers to, for kernels that assign to it.
  Tensor* mutable_input(int i) const { return params_->inputs[i].tensor; }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  DataType expected_output_dtype(int i) const { return op_kernel().output_type(i); }
  // Allocates output i with `shape`. ResourceExhausted ("OOM when allocating
  // tensor of shape [...] ... for node 'N'") when it cannot, never an abort.
  absl::Status allocate_output(int i, const TensorShape& shape, Tensor** out);
  // Reuses the buffer of the first listed input that no one else holds and
  // that matches output i's dtype and element count; otherwise allocates.
  absl::Status forward_input_or_allocate_output(std::initializer_list<int> candidates, int i,
                                                const TensorShape& shape, Tensor** out);
  absl::Status allocate_temp(DataType dtype, const TensorShape& shape, Tensor* out);
  // Sets output i to `t` (sharing its buffer; taking it when moved in, with
  // no temporary between: a tensor's move is a few stores the next load
  // would wait on).
  void set_output(int i, const Tensor& t) { SetValue(i) = t; }
  void set_output(int i, Tensor&& t) { SetValue(i) = std::move(t); }
  // Output `out` is input `in`: the same reference for a ref input, the same
  // buffer for a value, moved without touching its count when the input is
  // owned (TensorValue::owned). Input `in` may be empty afterwards: the
  // kernel reads it no more.
  void forward_input_to_output(int in, int out);
  // Makes output i a reference to `t`, guarded by `mu`.
  void set_output_ref(int i, absl::Mutex* mu, Tensor* t);
  // Passes ref input `in` through as ref output `out`.
  void forward_ref_input_to_ref_output(int in, int out);

  // The value produced for output i (nullptr when the kernel did not set it).
  Tensor* mutable_output(int i) { return outputs_[i].set ? outputs_[i].tensor() : nullptr; }
  // Output i as the executor consumes it (ref outputs keep their mutex).
  TensorValue output_value(int i) {
    Output& o = outputs_[i];
    if (!o.set) return TensorValue();
    if (o.ref) return TensorValue(o.ref_mu, o.ref);
    return TensorValue(&o.value);
  }
  bool output_is_set(int i) const { return outputs_[i].set; }

  void SetStatus(const absl::Status& s) {
    if (status_.ok()) status_ = s;
  }
  const absl::Status& status() const { return status_; }

 private:
  struct Output {
    Tensor value;
    Tensor* ref = nullptr;
    absl::Mutex* ref_mu = nullptr;
    bool set = false;
    Tensor* tensor() { return ref ? ref : &value; }
  };

  // Output i, marked set and not a reference, for its value to be assigned.
  Tensor& SetValue(int i) {
    Output& o = outputs_[i];
    o.ref = nullptr;
    o.ref_mu = nullptr;
    o.set = true;
    return o.value;
  }

  Params* params_;
  absl::InlinedVector<Output, 4> outputs_;
  absl::Status status_;
};

// Fails the kernel's context and returns when `cond` is false.
#define OP_REQUIRES(CTX, COND, STATUS) \
  do {                                 \
    if (!(COND)) {                     \
      (CTX)->SetStatus(STATUS);        \
      return;                          \
    }                                  \
  } while (0)

#define OP_REQUIRES_OK(CTX, EXPR)          \
  do {                                     \
    ::absl::Status df_op_status_ = (EXPR); \
    if (!df_op_status_.ok()) {             \
      (CTX)->SetStatus(df_op_status_);     \
      return;                              \
    }                                      \
  } while (0)

#define OP_REQUIRES_ASYNC(CTX, COND, STATUS, DONE) \
  do {                                             \
    if (!(COND)) {                                 \
      (CTX)->SetStatus(STATUS);                    \
      (DONE)();                                    \
      return;                                      \
    }                                              \
  } while (0)

#define OP_REQUIRES_OK_ASYNC(CTX, EXPR, DONE) \
  do {                                        \
    ::absl::Status df_op_status_ = (EXPR);    \
    if (!df_op_status_.ok()) {                \
      (CTX)->SetStatus(df_op_status_);        \
      (DONE)();                               \
      return;                                 \
    }                                         \
  } while (0)

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_OP_KERNEL_H_
