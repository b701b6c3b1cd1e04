#include "distflow/gradients/grad_op_registry.h"

#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {

GradOpRegistry* GradOpRegistry::Global() {
  static GradOpRegistry* registry = new GradOpRegistry;
  return registry;
}

bool GradOpRegistry::Register(absl::string_view op, GradFunc func) {
  absl::MutexLock lock(&mu_);
  const bool inserted = table_.emplace(std::string(op), func).second;
  DF_CHECK_MSG(inserted, absl::StrCat("gradient registered twice for op ", op));
  return true;
}

absl::Status GradOpRegistry::Lookup(absl::string_view op, GradFunc* func) const {
  absl::MutexLock lock(&mu_);
  auto it = table_.find(op);
  if (it == table_.end()) {
    return errors::NotFound("No gradient defined for op: ", op);
  }
  *func = it->second;
  return absl::OkStatus();
}

}  // namespace distflow
