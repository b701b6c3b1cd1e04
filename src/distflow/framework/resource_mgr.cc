#include "distflow/framework/resource_mgr.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distflow/core/status.h"

namespace distflow {

ResourceMgr::ResourceMgr() : ResourceMgr("localhost") {}

ResourceMgr::ResourceMgr(std::string default_container)
    : default_container_(std::move(default_container)) {}

ResourceMgr::~ResourceMgr() { Clear(); }

std::string ResourceMgr::ContainerName(absl::string_view container) const {
  return container.empty() ? default_container_ : std::string(container);
}

absl::Status ResourceMgr::DoCreate(absl::string_view container, const ResourceTypeIndex& type,
                                   absl::string_view name, ResourceBase* resource) {
  RefPtr<ResourceBase> owned(resource);
  const std::string c = ContainerName(container);
  absl::MutexLock l(&mu_);
  std::unique_ptr<Container>& slot = containers_[c];
  if (slot == nullptr) slot = std::make_unique<Container>();
  auto [it, inserted] =
      slot->try_emplace(std::make_pair(type.hash_code, std::string(name)), Entry{type.name, owned});
  if (!inserted) {
    return errors::AlreadyExists("Resource ", c, "/", name, " of type ", type.name,
                                 " already exists");
  }
  return absl::OkStatus();
}

absl::StatusOr<ResourceBase*> ResourceMgr::DoLookup(absl::string_view container,
                                                    const ResourceTypeIndex& type,
                                                    absl::string_view name) const {
  const std::string c = ContainerName(container);
  absl::ReaderMutexLock l(&mu_);
  auto cit = containers_.find(c);
  if (cit != containers_.end()) {
    auto it = cit->second->find(std::make_pair(type.hash_code, std::string(name)));
    if (it != cit->second->end()) {
      ResourceBase* r = it->second.resource.get();
      r->Ref();
      return r;
    }
  }
  return errors::NotFound("Resource ", c, "/", name, " of type ", type.name, " does not exist");
}

absl::StatusOr<ResourceBase*> ResourceMgr::DoLookupOrCreate(
    absl::string_view container, const ResourceTypeIndex& type, absl::string_view name,
    const std::function<absl::StatusOr<ResourceBase*>()>& creator) {
  const std::string c = ContainerName(container);
  absl::MutexLock l(&mu_);
  std::unique_ptr<Container>& slot = containers_[c];
  if (slot == nullptr) slot = std::make_unique<Container>();
  auto key = std::make_pair(type.hash_code, std::string(name));
  auto it = slot->find(key);
  if (it == slot->end()) {
    absl::StatusOr<ResourceBase*> made = creator();
    if (!made.ok()) {
      if (slot->empty()) containers_.erase(c);
      return made.status();
    }
    it = slot->emplace(std::move(key), Entry{type.name, RefPtr<ResourceBase>(*made)}).first;
  }
  ResourceBase* r = it->second.resource.get();
  r->Ref();
  return r;
}

absl::Status ResourceMgr::DoDelete(absl::string_view container, uint64_t type_hash,
                                   absl::string_view name) {
  const std::string c = ContainerName(container);
  RefPtr<ResourceBase> dropped;  // released after the lock
  {
    absl::MutexLock l(&mu_);
    auto cit = containers_.find(c);
    if (cit != containers_.end()) {
      auto it = cit->second->find(std::make_pair(type_hash, std::string(name)));
      if (it != cit->second->end()) {
        dropped = std::move(it->second.resource);
        cit->second->erase(it);
        return absl::OkStatus();
      }
    }
  }
  return errors::NotFound("Resource ", c, "/", name, " does not exist");
}

absl::Status ResourceMgr::Delete(const ResourceHandle& handle) {
  return DoDelete(handle.container(), handle.hash_code(), handle.name());
}

absl::Status ResourceMgr::Cleanup(absl::string_view container) {
  const std::string c = ContainerName(container);
  std::unique_ptr<Container> dropped;  // released after the lock
  {
    absl::MutexLock l(&mu_);
    auto it = containers_.find(c);
    if (it == containers_.end()) return absl::OkStatus();
    dropped = std::move(it->second);
    containers_.erase(it);
  }
  return absl::OkStatus();
}

void ResourceMgr::Clear() {
  absl::flat_hash_map<std::string, std::unique_ptr<Container>> dropped;
  {
    absl::MutexLock l(&mu_);
    dropped.swap(containers_);
  }
}

std::string ResourceMgr::DebugString() const {
  std::vector<std::string> lines;
  {
    absl::ReaderMutexLock l(&mu_);
    for (const auto& [c, container] : containers_) {
      for (const auto& [key, entry] : *container) {
        lines.push_back(absl::StrCat(c, "/", key.second, " (", entry.type_name,
                                     "): ", entry.resource->DebugString()));
      }
    }
  }
  std::sort(lines.begin(), lines.end());
  return absl::StrJoin(lines, "\n");
}

std::vector<ResourceMgr::Listed> ResourceMgr::List() const {
  std::vector<Listed> out;
  absl::ReaderMutexLock l(&mu_);
  for (const auto& [c, container] : containers_) {
    for (const auto& [key, entry] : *container) out.push_back({c, key.second, entry.resource});
  }
  return out;
}

absl::Status ResourceNameFromAttrs(OpKernelConstruction* ctx, ResourceName* out) {
  DF_RETURN_IF_ERROR(ctx->GetAttr("container", &out->container));
  DF_RETURN_IF_ERROR(ctx->GetAttr("shared_name", &out->name));
  if (out->name.empty()) out->name = ctx->name();
  if (out->container.empty() && ctx->device()->resource_manager() != nullptr) {
    out->container = ctx->device()->resource_manager()->default_container();
  }
  return absl::OkStatus();
}

absl::StatusOr<ResourceHandle> HandleFromInput(OpKernelContext* ctx, int index) {
  const Tensor& t = ctx->input(index);
  if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
    return errors::InvalidArgument("input ", index, " must be a resource handle scalar, got a ",
                                   DataTypeString(t.dtype()), " tensor of shape ",
                                   t.shape().DebugString());
  }
  return t.scalar<ResourceHandle>();
}

absl::StatusOr<ResourceMgr*> GetResourceMgr(DeviceBase* device) {
  ResourceMgr* rm = device->resource_manager();
  if (rm == nullptr) {
    return errors::Internal("device ", device->name(), " has no resource manager");
  }
  return rm;
}

absl::Status ValidateHandle(const DeviceBase& device, const ResourceHandle& handle,
                            const ResourceTypeIndex& type) {
  if (!handle.device().empty() && handle.device() != device.name()) {
    return errors::InvalidArgument("Resource '", handle.name(), "' lives on device ",
                                   handle.device(), " but is used from device ", device.name());
  }
  if (handle.hash_code() != type.hash_code) {
    return errors::InvalidArgument("Resource '", handle.name(), "' is a ", handle.maybe_type_name(),
                                   " but was used as a ", type.name);
  }
  return absl::OkStatus();
}

}  // namespace distflow
