// Kernels for SaveV2, RestoreV2 and MergeV2Checkpoints over the checkpoint
// format of framework/tensor_bundle.h (TensorFlow's). RestoreV2 reads and
// checks every requested tensor before it sets any output, so a failed
// restore changes nothing downstream. All refuse a prefix outside the
// allowed file roots (core/file_roots.h).
#include <filesystem>
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

// Parses shape_and_slices entry `spec` of tensor `name` ("" is the whole tensor).
absl::Status ParseSpec(absl::string_view op, absl::string_view name, const std::string& spec,
                       TensorShape* shape, TensorSlice* slice) {
  return errors::Annotate(ParseShapeAndSlice(spec, shape, slice),
                          absl::StrCat(op, " of tensor '", name, "': "));
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
      const Tensor& t = ctx->input(3 + i);
      if (specs[i].empty()) {
        OP_REQUIRES_OK(ctx, writer.Add(names[i], t));
        continue;
      }
      TensorShape full;
      TensorSlice slice;
      OP_REQUIRES_OK(ctx, ParseSpec("SaveV2", names[i], specs[i], &full, &slice));
      OP_REQUIRES_OK(ctx, writer.AddSlice(names[i], full, slice, t));
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
      if (specs[i].empty()) {
        absl::StatusOr<Tensor> t = (*reader)->Read(names[i], output_type(i));
        OP_REQUIRES_OK(ctx, t.status());
        restored.push_back(*std::move(t));
        continue;
      }
      TensorShape full;
      TensorSlice slice;
      OP_REQUIRES_OK(ctx, ParseSpec("RestoreV2", names[i], specs[i], &full, &slice));
      absl::StatusOr<Tensor> t = (*reader)->ReadSlice(names[i], output_type(i), full, slice);
      OP_REQUIRES_OK(ctx, t.status());
      restored.push_back(*std::move(t));
    }
    for (int i = 0; i < n; ++i) ctx->set_output(i, std::move(restored[i]));
  }
};

REGISTER_KERNEL_BUILDER(Name("RestoreV2").Device(kDeviceCpu), RestoreV2Op);

class MergeV2CheckpointsOp : public OpKernel {
 public:
  explicit MergeV2CheckpointsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("delete_old_dirs", &delete_old_dirs_));
    ctx->SetStatus(ctx->GetAttr("allow_missing_files", &allow_missing_files_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& inputs = ctx->input(0);
    const Tensor& dest = ctx->input(1);
    OP_REQUIRES(ctx, inputs.dims() == 1,
                errors::InvalidArgument("checkpoint_prefixes must be a vector, got shape ",
                                        inputs.shape().DebugString()));
    OP_REQUIRES(ctx, dest.dims() == 0,
                errors::InvalidArgument("destination_prefix must be a scalar, got shape ",
                                        dest.shape().DebugString()));
    const std::string& merged = dest.scalar<std::string>();
    OP_REQUIRES(ctx, !merged.empty(),
                errors::InvalidArgument("the destination checkpoint prefix is empty"));
    OP_REQUIRES_OK(ctx, CheckFileAllowed(merged));
    std::vector<std::string> prefixes;
    for (const std::string& p : inputs.flat<std::string>()) {
      OP_REQUIRES_OK(ctx, CheckFileAllowed(p));
      prefixes.push_back(p);
    }
    OP_REQUIRES_OK(ctx, MergeBundles(prefixes, merged, allow_missing_files_));
    if (!delete_old_dirs_) return;
    // Each input's directory goes when the merge left it empty (a sharded
    // save writes its parts into a directory of their own).
    const std::filesystem::path merged_dir = std::filesystem::path(merged).parent_path();
    for (const std::string& p : prefixes) {
      const std::filesystem::path dir = std::filesystem::path(p).parent_path();
      std::error_code ec;
      if (dir != merged_dir && std::filesystem::is_empty(dir, ec) && !ec) {
        std::filesystem::remove(dir, ec);
      }
    }
  }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

REGISTER_KERNEL_BUILDER(Name("MergeV2Checkpoints").Device(kDeviceCpu), MergeV2CheckpointsOp);

}  // namespace
}  // namespace distflow
