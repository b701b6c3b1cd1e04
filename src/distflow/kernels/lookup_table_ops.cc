// Kernels for the lookup-table ops (ops/lookup_ops.cc) on HashTable
// resources (lookup_table.h) in the device's ResourceMgr.
#include <utility>

#include "absl/strings/str_cat.h"
#include "distflow/core/env.h"
#include "distflow/core/file_roots.h"
#include "distflow/core/status.h"
#include "distflow/framework/kernel_registry.h"
#include "distflow/framework/resource_mgr.h"
#include "distflow/kernels/lookup_table.h"
#include "distflow/kernels/text_file_table_init.h"

namespace distflow {
namespace {

// The table input 0 names, of the dtypes the kernel expects.
absl::StatusOr<RefPtr<HashTable>> TableFromInput(OpKernelContext* ctx, DataType key_dtype,
                                                 DataType value_dtype) {
  DF_ASSIGN_OR_RETURN(ResourceHandle handle, HandleFromInput(ctx, 0));
  DF_ASSIGN_OR_RETURN(RefPtr<HashTable> table, LookupResource<HashTable>(ctx, handle));
  if (table->key_dtype() != key_dtype || table->value_dtype() != value_dtype) {
    return errors::InvalidArgument("table '", handle.name(), "' maps ",
                                   DataTypeString(table->key_dtype()), " to ",
                                   DataTypeString(table->value_dtype()), ", not ",
                                   DataTypeString(key_dtype), " to ", DataTypeString(value_dtype));
  }
  return table;
}

// Makes the table on first run (a HashTableV2 node may run once per step;
// every run hands out the same table).
class HashTableOp : public OpKernel {
 public:
  explicit HashTableOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    ResourceName name;
    OP_REQUIRES_OK(ctx, ResourceNameFromAttrs(ctx, &name));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("key_dtype", &key_dtype_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("value_dtype", &value_dtype_));
    OP_REQUIRES_OK(ctx, HashTable::CheckDtypes(key_dtype_, value_dtype_));
    handle_ = Tensor(DT_RESOURCE, TensorShape());
    handle_.scalar<ResourceHandle>() =
        MakeResourceHandle<HashTable>(ctx->device(), name.container, name.name);
  }

  void Compute(OpKernelContext* ctx) override {
    auto table = LookupOrCreateResource<HashTable>(
        ctx, handle_.scalar<ResourceHandle>(),
        [this]() -> absl::StatusOr<HashTable*> { return new HashTable(key_dtype_, value_dtype_); });
    OP_REQUIRES_OK(ctx, table.status());
    OP_REQUIRES(ctx, (*table)->key_dtype() == key_dtype_ && (*table)->value_dtype() == value_dtype_,
                errors::InvalidArgument("table '", handle_.scalar<ResourceHandle>().name(),
                                        "' exists with other dtypes: ", (*table)->DebugString()));
    ctx->set_output(0, handle_);
  }

 private:
  DataType key_dtype_ = DT_INVALID;
  DataType value_dtype_ = DT_INVALID;
  Tensor handle_;
};

REGISTER_KERNEL_BUILDER(Name("HashTableV2").Device(kDeviceCpu), HashTableOp);

class TableKernel : public OpKernel {
 public:
  explicit TableKernel(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Tin", &key_dtype_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Tout", &value_dtype_));
  }

 protected:
  DataType key_dtype_ = DT_INVALID;
  DataType value_dtype_ = DT_INVALID;
};

class LookupTableImportOp : public TableKernel {
 public:
  using TableKernel::TableKernel;

  void Compute(OpKernelContext* ctx) override {
    auto table = TableFromInput(ctx, key_dtype_, value_dtype_);
    OP_REQUIRES_OK(ctx, table.status());
    OP_REQUIRES_OK(ctx, (*table)->Import(ctx->input(1), ctx->input(2)));
  }
};

REGISTER_KERNEL_BUILDER(Name("LookupTableImportV2").Device(kDeviceCpu), LookupTableImportOp);

// Reads the file (inside the allowed file roots) and imports its entries.
class InitializeTableFromTextFileOp : public OpKernel {
 public:
  explicit InitializeTableFromTextFileOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("key_index", &columns_.key_index));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("value_index", &columns_.value_index));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("vocab_size", &columns_.vocab_size));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("delimiter", &columns_.delimiter));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("offset", &columns_.offset));
    OP_REQUIRES(ctx,
                !columns_.delimiter.empty() || (columns_.key_index < 0 && columns_.value_index < 0),
                errors::InvalidArgument("the delimiter must not be empty"));
  }

  void Compute(OpKernelContext* ctx) override {
    auto handle = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, handle.status());
    auto table = LookupResource<HashTable>(ctx, *handle);
    OP_REQUIRES_OK(ctx, table.status());
    const Tensor& filename = ctx->input(1);
    OP_REQUIRES(ctx, filename.dims() == 0,
                errors::InvalidArgument("filename must be a scalar, got shape ",
                                        filename.shape().DebugString()));
    const std::string& file = filename.scalar<std::string>();
    OP_REQUIRES_OK(ctx, CheckFileAllowed(file));
    auto contents = ReadFileToString(file);
    OP_REQUIRES_OK(ctx, contents.status());
    auto entries = ParseTextFileEntries(*contents, file, columns_, (*table)->key_dtype(),
                                        (*table)->value_dtype());
    OP_REQUIRES_OK(ctx, entries.status());
    OP_REQUIRES_OK(ctx, errors::Annotate((*table)->Import(entries->keys, entries->values),
                                         absl::StrCat(file, ": ")));
  }

 private:
  TextFileColumns columns_;
};

REGISTER_KERNEL_BUILDER(Name("InitializeTableFromTextFileV2").Device(kDeviceCpu),
                        InitializeTableFromTextFileOp);

class LookupTableFindOp : public TableKernel {
 public:
  using TableKernel::TableKernel;

  void Compute(OpKernelContext* ctx) override {
    auto table = TableFromInput(ctx, key_dtype_, value_dtype_);
    OP_REQUIRES_OK(ctx, table.status());
    Tensor* out;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, ctx->input(1).shape(), &out));
    OP_REQUIRES_OK(ctx, (*table)->Find(ctx->input(1), ctx->input(2), out));
  }
};

REGISTER_KERNEL_BUILDER(Name("LookupTableFindV2").Device(kDeviceCpu), LookupTableFindOp);

class LookupTableSizeOp : public OpKernel {
 public:
  explicit LookupTableSizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    auto handle = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, handle.status());
    auto table = LookupResource<HashTable>(ctx, *handle);
    OP_REQUIRES_OK(ctx, table.status());
    ctx->set_output(0, Tensor::Scalar<int64_t>((*table)->size()));
  }
};

REGISTER_KERNEL_BUILDER(Name("LookupTableSizeV2").Device(kDeviceCpu), LookupTableSizeOp);

}  // namespace
}  // namespace distflow
