#include "distflow/framework/function_library_runtime.h"

#include <memory>
#include <utility>

#include "absl/synchronization/notification.h"

namespace distflow {

absl::Status FunctionLibraryRuntime::RunSync(const CallOptions& options, Handle handle,
                                             std::vector<Tensor> args, std::vector<Tensor>* rets) {
  absl::Notification done;
  absl::Status status;
  Run(options, handle, std::move(args), rets, [&](const absl::Status& s) {
    status = s;
    done.Notify();
  });
  done.WaitForNotification();
  return status;
}

}  // namespace distflow
