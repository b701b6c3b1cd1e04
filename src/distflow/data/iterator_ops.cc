// Iterator kernels: IteratorV2 (a named iterator resource, found or created
// each step), AnonymousIteratorV2 (a fresh one with its deleter),
// MakeIterator, IteratorGetNext (OutOfRange "End of sequence" at the end,
// as in TensorFlow), DeleteIterator, and IteratorToStringHandle /
// IteratorFromStringHandleV2 (an iterator named by a string a client can
// hold and feed back, e.g. one iterator per worker of a coordinator).
#include <string>
#include <vector>

#include "distflow/core/status.h"
#include "distflow/data/anonymous_resource.h"
#include "distflow/data/iterator_resource.h"
#include "distflow/framework/kernel_registry.h"

namespace distflow {
namespace {

// The output_types and output_shapes attrs every iterator op has.
struct Structure {
  DataTypeVector dtypes;
  std::vector<PartialTensorShape> shapes;
};

absl::Status StructureFromAttrs(OpKernelConstruction* ctx, Structure* out) {
  DF_RETURN_IF_ERROR(ctx->GetAttr("output_types", &out->dtypes));
  DF_RETURN_IF_ERROR(ctx->GetAttr("output_shapes", &out->shapes));
  if (out->dtypes.size() != out->shapes.size()) {
    return errors::InvalidArgument("node '", ctx->name(), "' has ", out->dtypes.size(),
                                   " output_types but ", out->shapes.size(), " output_shapes");
  }
  return absl::OkStatus();
}

absl::StatusOr<RefPtr<IteratorResource>> IteratorFromInput(OpKernelContext* ctx, int index) {
  DF_ASSIGN_OR_RETURN(ResourceHandle handle, HandleFromInput(ctx, index));
  return LookupResource<IteratorResource>(ctx, handle);
}

class IteratorHandleOp : public OpKernel {
 public:
  explicit IteratorHandleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, StructureFromAttrs(ctx, &structure_));
    OP_REQUIRES_OK(ctx, ResourceNameFromAttrs(ctx, &name_));
    handle_ = Tensor(DT_RESOURCE, TensorShape());
    handle_.scalar<ResourceHandle>() =
        MakeResourceHandle<IteratorResource>(ctx->device(), name_.container, name_.name);
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceMgr*> rm = GetResourceMgr(ctx->device());
    OP_REQUIRES_OK(ctx, rm.status());
    absl::StatusOr<RefPtr<IteratorResource>> it = (*rm)->LookupOrCreate<IteratorResource>(
        name_.container, name_.name, [this]() -> absl::StatusOr<IteratorResource*> {
          return new IteratorResource(structure_.dtypes, structure_.shapes);
        });
    OP_REQUIRES_OK(ctx, it.status());
    absl::Status s = (*it)->MatchesStructure(structure_.dtypes, structure_.shapes);
    OP_REQUIRES(ctx, s.ok(),
                errors::InvalidArgument("node '", name(), "' names iterator '", name_.name,
                                        "', which exists with another structure: ", s.message()));
    ctx->set_output(0, handle_);
  }

 private:
  Structure structure_;
  ResourceName name_;
  Tensor handle_;
};

class AnonymousIteratorOp : public OpKernel {
 public:
  explicit AnonymousIteratorOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, StructureFromAttrs(ctx, &structure_));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceMgr*> rm = GetResourceMgr(ctx->device());
    OP_REQUIRES_OK(ctx, rm.status());
    const ResourceHandle handle = MakeResourceHandle<IteratorResource>(
        ctx->device(), "", UniqueResourceName("AnonymousIterator"));
    OP_REQUIRES_OK(ctx, (*rm)->Create(handle.container(), handle.name(),
                                      new IteratorResource(structure_.dtypes, structure_.shapes)));
    SetHandleAndDeleterOutputs(ctx, handle);
  }

 private:
  Structure structure_;
};

class MakeIteratorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<DatasetPtr> dataset =
        DatasetFromVariantTensor(ctx->input(0), "input 'dataset' of node '" + name() + "'");
    OP_REQUIRES_OK(ctx, dataset.status());
    absl::StatusOr<RefPtr<IteratorResource>> it = IteratorFromInput(ctx, 1);
    OP_REQUIRES_OK(ctx, it.status());
    OP_REQUIRES_OK(ctx, (*it)->MakeIterator(*dataset));
  }
};

class IteratorGetNextOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<RefPtr<IteratorResource>> it = IteratorFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, it.status());
    IteratorContext iter_ctx;
    iter_ctx.cancellation_manager = ctx->cancellation_manager();
    std::vector<Tensor> components;
    bool end_of_sequence = false;
    OP_REQUIRES_OK(ctx, (*it)->GetNext(&iter_ctx, &components, &end_of_sequence));
    OP_REQUIRES(ctx, !end_of_sequence, errors::OutOfRange("End of sequence"));
    OP_REQUIRES(ctx, static_cast<int>(components.size()) == num_outputs(),
                errors::InvalidArgument("node '", name(), "' has ", num_outputs(),
                                        " outputs but the iterator yields ", components.size(),
                                        " components"));
    for (int i = 0; i < num_outputs(); ++i) {
      OP_REQUIRES(ctx, components[i].dtype() == output_type(i),
                  errors::InvalidArgument(
                      "node '", name(), "' output ", i, " is ", DataTypeString(output_type(i)),
                      " but the iterator yields ", DataTypeString(components[i].dtype())));
      ctx->set_output(i, std::move(components[i]));
    }
  }
};

class DeleteIteratorOp : public OpKernel {
 public:
  explicit DeleteIteratorOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override { OP_REQUIRES_OK(ctx, DeleteAnonymousResource(ctx)); }
};

class IteratorToStringHandleOp : public OpKernel {
 public:
  explicit IteratorToStringHandleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<ResourceHandle> handle = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, handle.status());
    OP_REQUIRES_OK(ctx, ValidateHandle(*ctx->device(), *handle,
                                       ResourceTypeIndex::Make<IteratorResource>()));
    ResourceHandleProto proto;
    handle->AsProto(&proto);
    Tensor out(DT_STRING, TensorShape());
    out.scalar<std::string>() = proto.SerializeAsString();
    ctx->set_output(0, std::move(out));
  }
};

class IteratorFromStringHandleOp : public OpKernel {
 public:
  explicit IteratorFromStringHandleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, StructureFromAttrs(ctx, &structure_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    OP_REQUIRES(ctx, in.dtype() == DT_STRING && in.NumElements() == 1,
                errors::InvalidArgument("node '", name(),
                                        "' needs a string scalar iterator handle, got ",
                                        DataTypeString(in.dtype()), " ", in.shape().DebugString()));
    ResourceHandleProto proto;
    ResourceHandle handle;
    OP_REQUIRES(ctx, proto.ParseFromString(in.flat<std::string>()[0]),
                errors::InvalidArgument("node '", name(),
                                        "' got a string that is not an iterator handle"));
    OP_REQUIRES_OK(ctx, handle.FromProto(proto));
    absl::Status valid =
        ValidateHandle(*ctx->device(), handle, ResourceTypeIndex::Make<IteratorResource>());
    OP_REQUIRES(ctx, valid.ok(),
                errors::InvalidArgument("node '", name(), "': ", valid.message()));
    absl::StatusOr<RefPtr<IteratorResource>> it = LookupResource<IteratorResource>(ctx, handle);
    OP_REQUIRES_OK(ctx, it.status());
    if (!structure_.dtypes.empty()) {
      absl::Status s = (*it)->MatchesStructure(structure_.dtypes, structure_.shapes);
      OP_REQUIRES(ctx, s.ok(),
                  errors::InvalidArgument("node '", name(), "' expects another iterator structure: ",
                                          s.message()));
    }
    Tensor out(DT_RESOURCE, TensorShape());
    out.scalar<ResourceHandle>() = std::move(handle);
    ctx->set_output(0, std::move(out));
  }

 private:
  Structure structure_;
};

REGISTER_KERNEL_BUILDER(Name("IteratorV2").Device(kDeviceCpu), IteratorHandleOp);
REGISTER_KERNEL_BUILDER(Name("AnonymousIteratorV2").Device(kDeviceCpu), AnonymousIteratorOp);
REGISTER_KERNEL_BUILDER(Name("MakeIterator").Device(kDeviceCpu), MakeIteratorOp);
REGISTER_KERNEL_BUILDER(Name("IteratorGetNext").Device(kDeviceCpu), IteratorGetNextOp);
REGISTER_KERNEL_BUILDER(Name("DeleteIterator").Device(kDeviceCpu), DeleteIteratorOp);
REGISTER_KERNEL_BUILDER(Name("IteratorToStringHandle").Device(kDeviceCpu),
                        IteratorToStringHandleOp);
REGISTER_KERNEL_BUILDER(Name("IteratorFromStringHandleV2").Device(kDeviceCpu),
                        IteratorFromStringHandleOp);

}  // namespace
}  // namespace distflow
