// Kernels for SaveV2 and RestoreV2 over the checkpoint format of
// framework/tensor_bundle.h. RestoreV2 reads and checks every requested
// tensor before it sets any output, so a failed restore changes nothing
// downstream. Both refuse a prefix outside the allowed file roots
// (core/file_roots.h).
#include <string>
#include <vector>

#include "distflow/core/file_roots.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/tensor_bundle.h"

namespace distflow {
namespace {

// Checks the prefix, tensor_names and shape_and_slices inputs shared by both
// ops and returns the prefix.
absl::StatusOr<std::string> CheckpointArgs(OpKernelContext* ctx, int num_tensors) {
  const Tensor& prefix = ctx->input(0);
  if (prefix.dims() != 0) {
    return errors::InvalidArgument("prefix must be a scalar, got shape ",
                                   prefix.shape().DebugString());
  }
  for (int i : {1, 2}) {
    const Tensor& t = ctx->input(i);
    if (t.dims() != 1 || t.dim_size(0) != num_tensors) {
      return errors::InvalidArgument(
          i == 1 ? "tensor_names" : "shape_and_slices", " must be a vector of ", num_tensors,
          " entries (one per tensor), got shape ", t.shape().DebugString());
    }
  }
  if (prefix.scalar<std::string>().empty()) {
    return errors::InvalidArgument("the checkpoint prefix is empty");
  }
  // A server may confine the files ops touch (distflow server --file-root).
  DF_RETURN_IF_ERROR(CheckFileAllowed(prefix.scalar<std::string>()));
  return prefix.scalar<std::string>();
}

class SaveV2Op : public OpKernel {
 public:
  explicit SaveV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 3;
    absl::StatusOr<std::string> prefix = CheckpointArgs(ctx, n);
    OP_REQUIRES_OK(ctx, prefix.status());
    auto names = ctx->input(1).flat<std::string>();
    auto specs = ctx->input(2).flat<std::string>();
    BundleWriter writer(*prefix);
    for (int i = 0; i < n; ++i) {
      OP_REQUIRES(ctx, specs[i].empty(),
                  errors::Unimplemented("SaveV2 of tensor '", names[i],
                                        "': saving slices is not supported (shape_and_slices '",
                                        specs[i], "')"));
      OP_REQUIRES_OK(ctx, writer.Add(names[i], ctx->input(3 + i)));
    }
    OP_REQUIRES_OK(ctx, writer.Finish());
  }
};

REGISTER_KERNEL_BUILDER(Name("SaveV2").Device(kDeviceCpu), SaveV2Op);

class RestoreV2Op : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_outputs();
    absl::StatusOr<std::string> prefix = CheckpointArgs(ctx, n);
    OP_REQUIRES_OK(ctx, prefix.status());
    auto names = ctx->input(1).flat<std::string>();
    auto specs = ctx->input(2).flat<std::string>();
    absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(*prefix);
    OP_REQUIRES_OK(ctx, reader.status());
    std::vector<Tensor> restored;
    restored.reserve(n);
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<Tensor> t = (*reader)->Read(names[i], output_type(i));
      OP_REQUIRES_OK(ctx, t.status());
      if (!specs[i].empty()) {
        TensorShape wanted;
        OP_REQUIRES_OK(ctx,
                       errors::Annotate(ParseShapeAndSlice(specs[i], &wanted),
                                        absl::StrCat("RestoreV2 of tensor '", names[i], "': ")));
        OP_REQUIRES(
            ctx, wanted == t->shape(),
            errors::InvalidArgument("tensor '", names[i], "' has shape ", t->shape().DebugString(),
                                    " in checkpoint '", *prefix, "' but shape ",
                                    wanted.DebugString(), " was requested"));
      }
      restored.push_back(*std::move(t));
    }
    for (int i = 0; i < n; ++i) ctx->set_output(i, std::move(restored[i]));
  }
};

REGISTER_KERNEL_BUILDER(Name("RestoreV2").Device(kDeviceCpu), RestoreV2Op);

}  // namespace
}  // namespace distflow
