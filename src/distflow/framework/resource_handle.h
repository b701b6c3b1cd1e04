// ResourceHandle: the name of a resource (a variable, a queue, an
// accumulator) held by one device's ResourceMgr — the device, the container,
// the name, and the resource's C++ type (a hash code and a readable name).
// Handles are the elements of DT_RESOURCE tensors and cross process
// boundaries as ResourceHandleProto. A handle may also carry the dtype and
// shape its resource was declared with (VarHandleOp's dtype and shape attrs),
// which kernels check values against. A handle is a plain value: concurrent
// const use is safe.
#ifndef DISTFLOW_FRAMEWORK_RESOURCE_HANDLE_H_
#define DISTFLOW_FRAMEWORK_RESOURCE_HANDLE_H_

#include <cstdint>
#include <string>
#include <typeinfo>
#include <vector>

#include "absl/status/status.h"
#include "distflow/framework/tensor_shape.h"
#include "distflow/framework/types.h"
#include "distflow/resource_handle.pb.h"

namespace distflow {

// A dtype with a possibly partial shape.
struct DtypeAndPartialTensorShape {
  DataType dtype = DT_INVALID;
  PartialTensorShape shape;
};

// Identifies a C++ resource type: a hash code and a readable name. Built
// from typeid, so it is the same in every process running the same build.
struct ResourceTypeIndex {
  uint64_t hash_code = 0;
  std::string name;

  template <typename T>
  static ResourceTypeIndex Make() {
    return FromTypeInfo(typeid(T));
  }
  static ResourceTypeIndex FromTypeInfo(const std::type_info& info);
};

class ResourceHandle {
 public:
  ResourceHandle() = default;

  const std::string& device() const { return device_; }
  void set_device(std::string device) { device_ = std::move(device); }
  const std::string& container() const { return container_; }
  void set_container(std::string container) { container_ = std::move(container); }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  uint64_t hash_code() const { return hash_code_; }
  void set_hash_code(uint64_t hash_code) { hash_code_ = hash_code; }
  const std::string& maybe_type_name() const { return maybe_type_name_; }
  void set_maybe_type_name(std::string name) { maybe_type_name_ = std::move(name); }
  const std::vector<DtypeAndPartialTensorShape>& dtypes_and_shapes() const {
    return dtypes_and_shapes_;
  }
  void set_dtypes_and_shapes(std::vector<DtypeAndPartialTensorShape> v) {
    dtypes_and_shapes_ = std::move(v);
  }

  // A handle on `device` for the resource of type T named `name` in
  // `container`.
  template <typename T>
  static ResourceHandle Make(std::string device, std::string container, std::string name) {
    const ResourceTypeIndex type = ResourceTypeIndex::Make<T>();
    ResourceHandle h;
    h.device_ = std::move(device);
    h.container_ = std::move(container);
    h.name_ = std::move(name);
    h.hash_code_ = type.hash_code;
    h.maybe_type_name_ = type.name;
    return h;
  }

  void AsProto(ResourceHandleProto* proto) const;
  // InvalidArgument naming the handle when a declared shape is malformed.
  absl::Status FromProto(const ResourceHandleProto& proto);

  // "ResourceHandle(name=w, container=localhost, device=..., type=Var)".
  std::string DebugString() const;

 private:
  std::string device_;
  std::string container_;
  std::string name_;
  uint64_t hash_code_ = 0;
  std::string maybe_type_name_;
  std::vector<DtypeAndPartialTensorShape> dtypes_and_shapes_;
};

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_RESOURCE_HANDLE_H_
