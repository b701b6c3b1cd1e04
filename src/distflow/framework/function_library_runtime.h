// FunctionLibraryRuntime: how a kernel calls a library function on its own
// device. Instantiate turns a function name and attrs into a handle (the
// same instantiation gives the same handle, built once); Run calls it with
// argument tensors and hands back the results. A kernel that takes a `func`
// attr reaches the runtime of its device through
// OpKernelConstruction::function_library() (or OpKernelContext's).
//
// The interface lives in framework/ so kernels can use it; the runtime that
// builds executors for the bodies is common_runtime's
// LocalFunctionLibraryRuntime. All methods are thread-safe; Run may be
// called concurrently, also on one handle.
#ifndef DISTFLOW_FRAMEWORK_FUNCTION_LIBRARY_RUNTIME_H_
#define DISTFLOW_FRAMEWORK_FUNCTION_LIBRARY_RUNTIME_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "distflow/attr_value.pb.h"
#include "distflow/framework/tensor.h"
#include "distflow/framework/types.h"

namespace distflow {

class CancellationManager;
class DeviceBase;
class FunctionLibraryDefinition;

class FunctionLibraryRuntime {
 public:
  using Handle = int64_t;
  using DoneCallback = std::function<void(const absl::Status&)>;

  // What one call may take from its caller. Pointers are borrowed and must
  // outlive the call.
  struct CallOptions {
    int64_t step_id = 0;
    // Cancelling it stops the call, which then reports Cancelled.
    CancellationManager* cancellation_manager = nullptr;
    // Runs the body's expensive nodes; the runtime's own pool when null.
    const std::function<void(std::function<void()>)>* runner = nullptr;
  };

  virtual ~FunctionLibraryRuntime() = default;

  // The handle of `func` instantiated on this runtime's device. NotFound for
  // a function missing from the library; the instantiation, lowering and
  // kernel errors naming the function and node otherwise.
  virtual absl::StatusOr<Handle> Instantiate(const NameAttrList& func) = 0;

  // The argument / result types of an instantiated function; nullptr for an
  // unknown handle.
  virtual const DataTypeVector* arg_types(Handle handle) const = 0;
  virtual const DataTypeVector* ret_types(Handle handle) const = 0;

  // Calls the function with `args` and, once it has finished, fills `rets`
  // (one tensor per result) and calls `done` exactly once. InvalidArgument
  // for an unknown handle or arguments of the wrong number or types (naming
  // the function); the body's first error, naming the node, otherwise.
  // `rets` must stay valid until `done` has run.
  virtual void Run(const CallOptions& options, Handle handle, std::vector<Tensor> args,
                   std::vector<Tensor>* rets, DoneCallback done) = 0;

  // Run, waiting for it.
  absl::Status RunSync(const CallOptions& options, Handle handle, std::vector<Tensor> args,
                       std::vector<Tensor>* rets);

  virtual DeviceBase* device() const = 0;
  virtual const FunctionLibraryDefinition& library() const = 0;
};

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_FUNCTION_LIBRARY_RUNTIME_H_
