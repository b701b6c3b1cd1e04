// LocalFunctionLibraryRuntime: the FunctionLibraryRuntime of one device.
// Instantiate builds the function's body (graph/function_body.h), lowers the
// calls and control flow inside it, turns its _Arg and _Retval nodes into
// _Recv and _Send nodes of a per-call rendezvous, and builds one Executor on
// the device; the handle is cached per (function, attrs). Run sends the
// arguments, runs the executor, and receives the results. Every body node
// runs on this device (device requests inside the body are ignored).
// Kernels in the body get this runtime as their function library, so
// functions may call functions. Thread-safe.
#ifndef DISTFLOW_COMMON_RUNTIME_LOCAL_FUNCTION_LIBRARY_RUNTIME_H_
#define DISTFLOW_COMMON_RUNTIME_LOCAL_FUNCTION_LIBRARY_RUNTIME_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "distflow/common_runtime/device.h"
#include "distflow/common_runtime/executor.h"
#include "distflow/core/threadpool.h"
#include "distflow/framework/function.h"
#include "distflow/framework/function_library_runtime.h"

namespace distflow {

class LocalFunctionLibraryRuntime : public FunctionLibraryRuntime {
 public:
  // Borrows `device`, which must outlive the runtime.
  LocalFunctionLibraryRuntime(Device* device,
                              std::shared_ptr<const FunctionLibraryDefinition> library);
  ~LocalFunctionLibraryRuntime() override;
  LocalFunctionLibraryRuntime(const LocalFunctionLibraryRuntime&) = delete;
  LocalFunctionLibraryRuntime& operator=(const LocalFunctionLibraryRuntime&) = delete;

  absl::StatusOr<Handle> Instantiate(const NameAttrList& func) override;
  const DataTypeVector* arg_types(Handle handle) const override;
  const DataTypeVector* ret_types(Handle handle) const override;
  void Run(const CallOptions& options, Handle handle, std::vector<Tensor> args,
           std::vector<Tensor>* rets, DoneCallback done) override;

  DeviceBase* device() const override { return device_; }
  const FunctionLibraryDefinition& library() const override { return *library_; }
  // How many distinct instantiations were built.
  size_t num_instantiations() const;

 private:
  struct Item;
  absl::StatusOr<std::unique_ptr<Item>> Build(const NameAttrList& func);
  const Item* Find(Handle handle) const;
  const std::function<void(std::function<void()>)>& DefaultRunner();

  Device* const device_;
  const std::shared_ptr<const FunctionLibraryDefinition> library_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Handle> by_key_ ABSL_GUARDED_BY(mu_);
  // Items are never removed, so a pointer stays valid for the runtime's life.
  std::vector<std::unique_ptr<Item>> items_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ThreadPool> pool_ ABSL_GUARDED_BY(mu_);
  std::function<void(std::function<void()>)> default_runner_ ABSL_GUARDED_BY(mu_);
};

}  // namespace distflow

#endif  // DISTFLOW_COMMON_RUNTIME_LOCAL_FUNCTION_LIBRARY_RUNTIME_H_
