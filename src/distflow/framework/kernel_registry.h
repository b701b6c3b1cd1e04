// The process-wide table of kernels, keyed by op name and device type, each
// with type constraints on the node's attrs:
//   REGISTER_KERNEL_BUILDER(
//       Name("MatMul").Device(kDeviceCpu).TypeConstraint<float>("T"),
//       MatMulOp<float>);
// Lookup picks the first registered kernel whose constraints the NodeDef
// satisfies. Thread-safe.
#ifndef DISTFLOW_FRAMEWORK_KERNEL_REGISTRY_H_
#define DISTFLOW_FRAMEWORK_KERNEL_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/framework/op_kernel.h"

namespace distflow {

// A kernel's registration: the op, the device type, the allowed types per
// type attr, and the args that live in host memory on non-CPU devices.
struct KernelDef {
  std::string op;
  std::string device_type;
  std::vector<std::pair<std::string, std::vector<DataType>>> type_constraints;
  std::vector<std::string> host_memory_args;
};

class KernelDefBuilder {
 public:
  explicit KernelDefBuilder(std::string op) { def_.op = std::move(op); }
  KernelDefBuilder& Device(std::string device_type) {
    def_.device_type = std::move(device_type);
    return *this;
  }
  template <typename T>
  KernelDefBuilder& TypeConstraint(std::string attr) {
    return TypeConstraint(std::move(attr), {DataTypeToEnum<T>::value});
  }
  KernelDefBuilder& TypeConstraint(std::string attr, std::vector<DataType> allowed) {
    def_.type_constraints.emplace_back(std::move(attr), std::move(allowed));
    return *this;
  }
  KernelDefBuilder& HostMemory(std::string arg) {
    def_.host_memory_args.push_back(std::move(arg));
    return *this;
  }
  const KernelDef& Build() const { return def_; }

 private:
  KernelDef def_;
};

using KernelFactory = std::function<OpKernel*(OpKernelConstruction*)>;

class KernelRegistry {
 public:
  static KernelRegistry* Global();

  void Register(KernelDef def, KernelFactory factory);

  // The kernel def that fits `node_def` on `device_type`. NotFound naming the
  // node, the device type and the node's type attrs when none does.
  absl::StatusOr<const KernelDef*> FindKernelDef(absl::string_view device_type,
                                                 const NodeDef& node_def) const;

  // Builds the kernel for a node, giving it `function_library` (may be
  // null). REQUIRES: node_def has its default attrs.
  absl::StatusOr<std::unique_ptr<OpKernel>> CreateKernel(
      DeviceBase* device, const NodeDef& node_def,
      FunctionLibraryRuntime* function_library = nullptr) const;

  // Device types with a kernel for this node, in registration order.
  std::vector<std::string> SupportedDeviceTypes(const NodeDef& node_def) const;

 private:
  struct Entry {
    KernelDef def;
    KernelFactory factory;
  };
  absl::StatusOr<const Entry*> Find(absl::string_view device_type, const NodeDef& node_def) const;

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
};

namespace internal {
struct KernelRegistrar {
  KernelRegistrar(const KernelDefBuilder& builder, KernelFactory factory) {
    KernelRegistry::Global()->Register(builder.Build(), std::move(factory));
  }
};
}  // namespace internal

// Short name used inside REGISTER_KERNEL_BUILDER.
inline KernelDefBuilder Name(std::string op) { return KernelDefBuilder(std::move(op)); }

#define REGISTER_KERNEL_BUILDER(builder, ...) \
  DF_REGISTER_KERNEL_UNIQ_HELPER(__COUNTER__, builder, __VA_ARGS__)
#define DF_REGISTER_KERNEL_UNIQ_HELPER(ctr, builder, ...) \
  DF_REGISTER_KERNEL_UNIQ(ctr, builder, __VA_ARGS__)
#define DF_REGISTER_KERNEL_UNIQ(ctr, builder, ...)                                            \
  static ::distflow::internal::KernelRegistrar df_register_kernel##ctr [[maybe_unused]] (     \
      ::distflow::builder, [](::distflow::OpKernelConstruction* c) -> ::distflow::OpKernel* { \
        return new __VA_ARGS__(c);                                                            \
      })

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_KERNEL_REGISTRY_H_
