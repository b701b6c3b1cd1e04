#include "distflow/framework/op_kernel.h"

#include "absl/synchronization/notification.h"

namespace distflow {

OpKernelConstruction::OpKernelConstruction(DeviceBase* device, const NodeDef& def,
                                           const OpDef& op_def, DataTypeSlice input_types,
                                           DataTypeSlice output_types,
                                           FunctionLibraryRuntime* function_library)
    : device_(device),
      def_(def),
      op_def_(op_def),
      input_types_(input_types),
      output_types_(output_types),
      function_library_(function_library) {}

OpKernel::OpKernel(OpKernelConstruction* ctx)
    : def_(ctx->def()),
      input_types_(ctx->input_types().begin(), ctx->input_types().end()),
      output_types_(ctx->output_types().begin(), ctx->output_types().end()),
      function_library_(ctx->function_library()) {}

OpKernel::~OpKernel() = default;

void AsyncOpKernel::Compute(OpKernelContext* ctx) {
  absl::Notification n;
  ComputeAsync(ctx, [&n] { n.Notify(); });
  n.WaitForNotification();
}

absl::Status OpKernelContext::allocate_output(int i, const TensorShape& shape, Tensor** out) {
  Output& o = outputs_[i];
  Tensor t;
  DF_RETURN_IF_ERROR(Tensor::Allocate(expected_output_dtype(i), shape, &t, op_kernel().name()));
  o.value = std::move(t);
  o.ref = nullptr;
  o.ref_mu = nullptr;
  o.set = true;
  *out = &o.value;
  return absl::OkStatus();
}

absl::Status OpKernelContext::forward_input_or_allocate_output(
    std::initializer_list<int> candidates, int i, const TensorShape& shape, Tensor** out) {
  const DataType dtype = expected_output_dtype(i);
  for (int in : candidates) {
    const TensorValue& v = params_->inputs[in];
    if (v.is_ref() || v.tensor == nullptr) continue;
    const Tensor& t = *v.tensor;
    if (t.dtype() != dtype || t.NumElements() != shape.num_elements() || dtype == DT_STRING ||
        !t.RefCountIsOne()) {
      continue;
    }
    Output& o = outputs_[i];
    // Shared, not moved, even from an owned input: the kernel still reads
    // its inputs after this returns.
    o.value = Tensor();
    o.value.CopyFrom(t, shape);
    o.ref = nullptr;
    o.ref_mu = nullptr;
    o.set = true;
    *out = &o.value;
    return absl::OkStatus();
  }
  return allocate_output(i, shape, out);
}

absl::Status OpKernelContext::allocate_temp(DataType dtype, const TensorShape& shape, Tensor* out) {
  return Tensor::Allocate(dtype, shape, out, op_kernel().name());
}

void OpKernelContext::set_output_ref(int i, absl::Mutex* mu, Tensor* t) {
  Output& o = outputs_[i];
  o.value = Tensor();
  o.ref = t;
  o.ref_mu = mu;
  o.set = true;
}

void OpKernelContext::forward_ref_input_to_ref_output(int in, int out) {
  set_output_ref(out, params_->inputs[in].mutex_if_ref, params_->inputs[in].tensor);
}

void OpKernelContext::forward_input_to_output(int in, int out) {
  const TensorValue& v = params_->inputs[in];
  if (v.is_ref()) {
    set_output_ref(out, v.mutex_if_ref, v.tensor);
  } else if (v.owned) {
    set_output(out, std::move(*v.tensor));
  } else {
    set_output(out, *v.tensor);
  }
}

}  // namespace distflow
