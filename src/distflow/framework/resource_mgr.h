// ResourceMgr: the stateful objects of one device — variables, queues,
// accumulators — that outlive a step. Resources live in named containers
// (the empty container name means the manager's default container,
// "localhost" for devices) and are keyed by (C++ type, name), so a queue and
// a variable may share a name. Resources are reference counted: the manager
// holds one reference per entry, every lookup hands the caller another, and a
// resource is destroyed when the manager has dropped it (Delete, Cleanup,
// Clear, destruction) and no caller holds it any more.
//
// Also here: the helpers kernels use to go from a DT_RESOURCE input to the
// resource it names, checking that the handle's device and type fit.
//
// ResourceMgr is thread-safe. Resources do their own locking.
#ifndef DISTFLOW_FRAMEWORK_RESOURCE_MGR_H_
#define DISTFLOW_FRAMEWORK_RESOURCE_MGR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/refcount.h"
#include "distflow/framework/op_kernel.h"
#include "distflow/framework/resource_handle.h"

namespace distflow {

// Base class of everything a ResourceMgr holds.
class ResourceBase : public RefCounted {
 public:
  // A one-line description for error messages and debugging.
  virtual std::string DebugString() const = 0;
  // Bytes of memory the resource holds (a variable: its value's bytes); 0
  // where a type does not say.
  virtual int64_t MemoryUsed() const { return 0; }
};

class ResourceMgr {
 public:
  // Default container "localhost".
  ResourceMgr();
  explicit ResourceMgr(std::string default_container);
  // Drops every resource (callers' references keep theirs alive).
  ~ResourceMgr();
  ResourceMgr(const ResourceMgr&) = delete;
  ResourceMgr& operator=(const ResourceMgr&) = delete;

  const std::string& default_container() const { return default_container_; }

  // Adds `resource` as `name` in `container`, taking over the caller's
  // reference in every case. AlreadyExists naming the container and the
  // resource when one of that type and name is there (the new one is then
  // released).
  template <typename T>
  absl::Status Create(absl::string_view container, absl::string_view name, T* resource) {
    return DoCreate(container, ResourceTypeIndex::Make<T>(), name, resource);
  }

  // The resource of type T named `name` in `container`; NotFound naming the
  // container, the name and the type when there is none.
  template <typename T>
  absl::StatusOr<RefPtr<T>> Lookup(absl::string_view container, absl::string_view name) const {
    DF_ASSIGN_OR_RETURN(ResourceBase * r, DoLookup(container, ResourceTypeIndex::Make<T>(), name));
    return RefPtr<T>(static_cast<T*>(r));
  }

  // Like Lookup, but when the resource does not exist calls `creator` (under
  // the manager's lock, so exactly one caller creates it) and adds what it
  // returns. The creator's error is returned unchanged.
  template <typename T>
  absl::StatusOr<RefPtr<T>> LookupOrCreate(absl::string_view container, absl::string_view name,
                                           const std::function<absl::StatusOr<T*>()>& creator) {
    DF_ASSIGN_OR_RETURN(ResourceBase * r,
                        DoLookupOrCreate(container, ResourceTypeIndex::Make<T>(), name,
                                         [&creator]() -> absl::StatusOr<ResourceBase*> {
                                           DF_ASSIGN_OR_RETURN(T * t, creator());
                                           return t;
                                         }));
    return RefPtr<T>(static_cast<T*>(r));
  }

  // Removes the resource of type T named `name`; NotFound when absent.
  template <typename T>
  absl::Status Delete(absl::string_view container, absl::string_view name) {
    return DoDelete(container, ResourceTypeIndex::Make<T>().hash_code, name);
  }
  // Removes the resource `handle` names (container, name and type).
  absl::Status Delete(const ResourceHandle& handle);

  // Removes every resource of `container`. OK when the container is absent.
  absl::Status Cleanup(absl::string_view container);
  // Removes every container.
  void Clear();

  // One line per resource: "container/name (type): description".
  std::string DebugString() const;

  // Every resource held now, each with a reference of its own: the caller
  // may call anything on them once List has returned.
  struct Listed {
    std::string container, name;
    RefPtr<ResourceBase> resource;
  };
  std::vector<Listed> List() const;

 private:
  struct Entry {
    std::string type_name;
    RefPtr<ResourceBase> resource;
  };
  // (type hash, name) -> entry.
  using Container = absl::flat_hash_map<std::pair<uint64_t, std::string>, Entry>;

  // `container`, or the default container when it is empty.
  std::string ContainerName(absl::string_view container) const;
  absl::Status DoCreate(absl::string_view container, const ResourceTypeIndex& type,
                        absl::string_view name, ResourceBase* resource);
  // Returns a new reference.
  absl::StatusOr<ResourceBase*> DoLookup(absl::string_view container, const ResourceTypeIndex& type,
                                         absl::string_view name) const;
  absl::StatusOr<ResourceBase*> DoLookupOrCreate(
      absl::string_view container, const ResourceTypeIndex& type, absl::string_view name,
      const std::function<absl::StatusOr<ResourceBase*>()>& creator);
  absl::Status DoDelete(absl::string_view container, uint64_t type_hash, absl::string_view name);

  const std::string default_container_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<Container>> containers_ ABSL_GUARDED_BY(mu_);
};

// The container and name a resource-creating kernel (VarHandleOp,
// VariableV2, FIFOQueueV2, ...) uses: its "container" attr (empty: the
// device's default container) and its "shared_name" attr (empty: the node's
// name).
struct ResourceName {
  std::string container;
  std::string name;
};
absl::Status ResourceNameFromAttrs(OpKernelConstruction* ctx, ResourceName* out);

// A handle for the resource of type T named `name` in `container` (empty:
// the default container) on the kernel's device.
template <typename T>
ResourceHandle MakeResourceHandle(DeviceBase* device, const std::string& container,
                                  const std::string& name);

// The handle in DT_RESOURCE scalar input `index`; InvalidArgument naming the
// input otherwise.
absl::StatusOr<ResourceHandle> HandleFromInput(OpKernelContext* ctx, int index);

// The device's resource manager; Internal when the device has none.
absl::StatusOr<ResourceMgr*> GetResourceMgr(DeviceBase* device);

// InvalidArgument when `handle` names a resource on another device or of
// another type than `type`.
absl::Status ValidateHandle(const DeviceBase& device, const ResourceHandle& handle,
                            const ResourceTypeIndex& type);

// The resource `handle` names, after ValidateHandle; NotFound when absent.
template <typename T>
absl::StatusOr<RefPtr<T>> LookupResource(OpKernelContext* ctx, const ResourceHandle& handle) {
  DF_RETURN_IF_ERROR(ValidateHandle(*ctx->device(), handle, ResourceTypeIndex::Make<T>()));
  DF_ASSIGN_OR_RETURN(ResourceMgr * rm, GetResourceMgr(ctx->device()));
  return rm->Lookup<T>(handle.container(), handle.name());
}

template <typename T>
absl::StatusOr<RefPtr<T>> LookupOrCreateResource(
    OpKernelContext* ctx, const ResourceHandle& handle,
    const std::function<absl::StatusOr<T*>()>& creator) {
  DF_RETURN_IF_ERROR(ValidateHandle(*ctx->device(), handle, ResourceTypeIndex::Make<T>()));
  DF_ASSIGN_OR_RETURN(ResourceMgr * rm, GetResourceMgr(ctx->device()));
  return rm->LookupOrCreate<T>(handle.container(), handle.name(), creator);
}

template <typename T>
ResourceHandle MakeResourceHandle(DeviceBase* device, const std::string& container,
                                  const std::string& name) {
  std::string c = container;
  if (c.empty() && device->resource_manager() != nullptr) {
    c = device->resource_manager()->default_container();
  }
  return ResourceHandle::Make<T>(device->name(), std::move(c), name);
}

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_RESOURCE_MGR_H_
