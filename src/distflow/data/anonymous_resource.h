// Anonymous resources (AnonymousIteratorV2, AnonymousSeedGenerator): a
// resource added to the device's ResourceMgr under a fresh unique name,
// output as a handle plus a "deleter" — a DT_VARIANT token that the
// matching Delete op (DeleteIterator, DeleteSeedGenerator) takes with the
// handle, as in TensorFlow. The resource lives until that op runs or the
// device's ResourceMgr is cleared (session close). Thread-safe.
#ifndef DISTFLOW_DATA_ANONYMOUS_RESOURCE_H_
#define DISTFLOW_DATA_ANONYMOUS_RESOURCE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "distflow/framework/op_kernel.h"
#include "distflow/framework/resource_handle.h"
#include "distflow/framework/variant.h"

namespace distflow {

// The deleter's value: names the resource it deletes.
class ResourceDeleterToken final : public VariantValue {
 public:
  explicit ResourceDeleterToken(ResourceHandle handle) : handle_(std::move(handle)) {}
  const ResourceHandle& handle() const { return handle_; }
  std::string TypeName() const override { return "ResourceDeleter"; }
  std::string DebugString() const override;

 private:
  const ResourceHandle handle_;
};

// A fresh resource name, unique in this process: "<prefix>_<n>".
std::string UniqueResourceName(absl::string_view prefix);

// Sets output 0 to `handle` and output 1 to its deleter.
void SetHandleAndDeleterOutputs(OpKernelContext* ctx, const ResourceHandle& handle);

// Deletes the resource of the Delete op's inputs (handle, deleter):
// InvalidArgument when the deleter is not the handle's, NotFound when the
// resource is gone already.
absl::Status DeleteAnonymousResource(OpKernelContext* ctx);

}  // namespace distflow

#endif  // DISTFLOW_DATA_ANONYMOUS_RESOURCE_H_
