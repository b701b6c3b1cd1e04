// Runs the state kernels (variables, queues, accumulators, checkpoints)
// against one test device whose ResourceMgr persists across runs, so tests
// can play several "steps" in a row:
//   StateKernelRunner r;
//   auto h = r.RunOne("VarHandleOp", {}, {{"dtype", DT_FLOAT}, ...}, "w");
//   r.Run("AssignVariableOp", {h, value}, {{"dtype", DT_FLOAT}});
// Inputs may be reference edges (a tensor and its mutex, as VariableV2
// outputs them). Kernels are kept until the runner goes, so references into
// a kernel (ConditionalAccumulator's handle) stay valid. Async kernels can be
// started and waited for separately, with a CancellationManager.
// Thread-safe: runs may be started from several threads.
#ifndef DISTFLOW_TESTS_KERNELS_STATE_TEST_UTIL_H_
#define DISTFLOW_TESTS_KERNELS_STATE_TEST_UTIL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "distflow/core/status.h"
#include "distflow/framework/cancellation.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/op_registry.h"
#include "distflow/framework/resource_handle.h"
#include "distflow/framework/resource_mgr.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace distflow {
namespace test {

inline constexpr char kStateTestDevice[] = "/job:localhost/replica:0/task:0/device:CPU:0";

class StateTestDevice : public DeviceBase {
 public:
  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  ResourceMgr* resource_manager() const override { return &rm_; }

 private:
  std::string name_ = kStateTestDevice;
  std::string type_ = kDeviceCpu;
  mutable ResourceMgr rm_;
};

// A kernel input: a value, or a reference to a tensor guarded by a mutex.
struct KernelInput {
  KernelInput(Tensor t) : value(std::move(t)) {}  // NOLINT: implicit on purpose
  KernelInput(Tensor* t, absl::Mutex* mu) : ref(t), mu(mu) {}
  Tensor value;
  Tensor* ref = nullptr;
  absl::Mutex* mu = nullptr;
};

// One kernel invocation, finished or not.
class KernelRun {
 public:
  // Waits up to `timeout`; returns true iff the kernel finished.
  bool WaitFor(absl::Duration timeout) { return done_.WaitForNotificationWithTimeout(timeout); }
  bool finished() const { return done_.HasBeenNotified(); }
  // REQUIRES: finished().
  const absl::Status& status() const { return status_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }
  // Output i as a reference input for the next kernel.
  KernelInput ref_output(int i) const { return KernelInput(refs_[i].first, refs_[i].second); }

 private:
  friend class StateKernelRunner;
  std::vector<Tensor> owned_;
  std::vector<TensorValue> inputs_;
  OpKernelContext::Params params_;
  std::unique_ptr<OpKernelContext> ctx_;
  absl::Status status_;
  std::vector<Tensor> outputs_;
  std::vector<std::pair<Tensor*, absl::Mutex*>> refs_;
  absl::Notification done_;
};

class StateKernelRunner {
 public:
  StateTestDevice* device() { return &device_; }
  ResourceMgr* resource_manager() { return device_.resource_manager(); }

  // Builds node `node_name` of `op` and starts it. The run finishes at once
  // unless the kernel is asynchronous and waits.
  std::shared_ptr<KernelRun> Start(const std::string& op, const std::vector<KernelInput>& inputs,
                                   const std::vector<KernelAttr>& attrs,
                                   const std::string& node_name = "test_node",
                                   CancellationManager* cm = nullptr) {
    auto run = std::make_shared<KernelRun>();
    absl::StatusOr<OpKernel*> kernel = MakeKernel(op, inputs.size(), attrs, node_name);
    if (!kernel.ok()) {
      run->status_ = kernel.status();
      run->done_.Notify();
      return run;
    }
    run->owned_.reserve(inputs.size());
    for (const KernelInput& in : inputs) {
      run->owned_.push_back(in.value);
      run->inputs_.push_back(in.ref != nullptr ? TensorValue(in.mu, in.ref)
                                               : TensorValue(&run->owned_.back()));
    }
    run->params_.op_kernel = *kernel;
    run->params_.device = &device_;
    run->params_.inputs = run->inputs_.data();
    run->params_.num_inputs = static_cast<int>(run->inputs_.size());
    run->params_.cancellation_manager = cm;
    run->ctx_ = std::make_unique<OpKernelContext>(&run->params_);
    KernelRun* r = run.get();
    auto finish = [r] {
      OpKernelContext* ctx = r->ctx_.get();
      r->status_ = ctx->status();
      if (r->status_.ok()) {
        for (int i = 0; i < ctx->num_outputs(); ++i) {
          const TensorValue v = ctx->output_value(i);
          if (v.tensor == nullptr) {
            r->status_ = errors::Internal("kernel did not set output ", i);
            break;
          }
          if (v.is_ref()) {
            absl::ReaderMutexLock l(v.mutex_if_ref);
            r->outputs_.push_back(*v.tensor);
          } else {
            r->outputs_.push_back(*v.tensor);
          }
          r->refs_.emplace_back(v.tensor, v.mutex_if_ref);
        }
      }
      r->done_.Notify();
    };
    if (AsyncOpKernel* async = (*kernel)->AsAsync()) {
      async->ComputeAsync(r->ctx_.get(), [run, finish] { finish(); });
    } else {
      (*kernel)->Compute(r->ctx_.get());
      finish();
    }
    return run;
  }

  // Runs a kernel to completion (waiting at most 10 s) and returns its run.
  std::shared_ptr<KernelRun> RunToEnd(const std::string& op, const std::vector<KernelInput>& inputs,
                                      const std::vector<KernelAttr>& attrs,
                                      const std::string& node_name = "test_node") {
    std::shared_ptr<KernelRun> run = Start(op, inputs, attrs, node_name);
    EXPECT_TRUE(run->WaitFor(absl::Seconds(10))) << op << " did not finish";
    return run;
  }

  // The outputs of a kernel run to completion, or its error.
  absl::StatusOr<std::vector<Tensor>> Run(const std::string& op,
                                          const std::vector<KernelInput>& inputs,
                                          const std::vector<KernelAttr>& attrs,
                                          const std::string& node_name = "test_node") {
    std::shared_ptr<KernelRun> run = RunToEnd(op, inputs, attrs, node_name);
    if (!run->finished()) return errors::DeadlineExceeded(op, " did not finish");
    if (!run->status().ok()) return run->status();
    return run->outputs();
  }

  // Output 0 of a kernel that must succeed.
  Tensor RunOne(const std::string& op, const std::vector<KernelInput>& inputs,
                const std::vector<KernelAttr>& attrs, const std::string& node_name = "test_node") {
    absl::StatusOr<std::vector<Tensor>> out = Run(op, inputs, attrs, node_name);
    EXPECT_TRUE(out.ok()) << op << ": " << out.status();
    if (!out.ok() || out->empty()) return Tensor();
    return (*out)[0];
  }

  // A kernel that must succeed, for its effect.
  void RunOk(const std::string& op, const std::vector<KernelInput>& inputs,
             const std::vector<KernelAttr>& attrs, const std::string& node_name = "test_node") {
    absl::StatusOr<std::vector<Tensor>> out = Run(op, inputs, attrs, node_name);
    EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  }

 private:
  absl::StatusOr<OpKernel*> MakeKernel(const std::string& op, size_t num_inputs,
                                       const std::vector<KernelAttr>& attrs,
                                       const std::string& node_name) {
    NodeDef def;
    def.set_name(node_name);
    def.set_op(op);
    for (size_t i = 0; i < num_inputs; ++i) def.add_input("in" + std::to_string(i));
    for (const KernelAttr& a : attrs) (*def.mutable_attr())[a.name] = a.value;
    const OpRegistrationData* reg = OpRegistry::Global()->LookUp(op);
    if (reg == nullptr) return errors::Unimplemented("op '", op, "' is not registered");
    AddDefaultsToNodeDef(reg->op_def, &def);
    DF_RETURN_IF_ERROR(ValidateNodeDef(def, reg->op_def));
    DF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                        KernelRegistry::Global()->CreateKernel(&device_, def));
    absl::MutexLock l(&mu_);
    kernels_.push_back(std::move(kernel));
    return kernels_.back().get();
  }

  StateTestDevice device_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<OpKernel>> kernels_;
};

// Expects `status` to have `code` and a message containing every substring.
inline void ExpectError(const absl::Status& status, absl::StatusCode code,
                        const std::vector<std::string>& substrings) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& s : substrings) {
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(s)) << status;
  }
}

inline Tensor StringVector(const std::vector<std::string>& values) {
  return Tensor::FromVector<std::string>(values);
}

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_KERNELS_STATE_TEST_UTIL_H_
