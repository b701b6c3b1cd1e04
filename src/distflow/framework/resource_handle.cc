#include "distflow/framework/resource_handle.h"

#include <cxxabi.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "distflow/core/status.h"

namespace distflow {

ResourceTypeIndex ResourceTypeIndex::FromTypeInfo(const std::type_info& info) {
  ResourceTypeIndex index;
  index.hash_code = static_cast<uint64_t>(info.hash_code());
  int status = 0;
  char* demangled = abi::__cxa_demangle(info.name(), nullptr, nullptr, &status);
  if (status == 0 && demangled != nullptr) {
    index.name = demangled;
  } else {
    index.name = info.name();
  }
  std::free(demangled);
  return index;
}

void ResourceHandle::AsProto(ResourceHandleProto* proto) const {
  proto->Clear();
  proto->set_device(device_);
  proto->set_container(container_);
  proto->set_name(name_);
  proto->set_hash_code(hash_code_);
  proto->set_maybe_type_name(maybe_type_name_);
  for (const DtypeAndPartialTensorShape& ds : dtypes_and_shapes_) {
    ResourceHandleProto::DtypeAndShape* p = proto->add_dtypes_and_shapes();
    p->set_dtype(ds.dtype);
    ds.shape.AsProto(p->mutable_shape());
  }
}

absl::Status ResourceHandle::FromProto(const ResourceHandleProto& proto) {
  std::vector<DtypeAndPartialTensorShape> dtypes_and_shapes;
  for (const ResourceHandleProto::DtypeAndShape& p : proto.dtypes_and_shapes()) {
    DtypeAndPartialTensorShape ds;
    ds.dtype = p.dtype();
    DF_RETURN_IF_ERROR(errors::Annotate(PartialTensorShape::FromProto(p.shape(), &ds.shape),
                                        absl::StrCat("resource handle '", proto.name(), "': ")));
    dtypes_and_shapes.push_back(std::move(ds));
  }
  device_ = proto.device();
  container_ = proto.container();
  name_ = proto.name();
  hash_code_ = proto.hash_code();
  maybe_type_name_ = proto.maybe_type_name();
  dtypes_and_shapes_ = std::move(dtypes_and_shapes);
  return absl::OkStatus();
}

std::string ResourceHandle::DebugString() const {
  return absl::StrCat("ResourceHandle(name=", name_, ", container=", container_,
                      ", device=", device_, ", type=", maybe_type_name_, ")");
}

}  // namespace distflow
