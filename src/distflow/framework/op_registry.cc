#include "distflow/framework/op_registry.h"

#include <algorithm>

#include "distflow/core/logging.h"
#include "distflow/core/status.h"

namespace distflow {

OpRegistry* OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry;
  return registry;
}

absl::Status OpRegistry::Register(OpRegistrationData data) {
  absl::MutexLock lock(&mu_);
  const std::string name = data.op_def.name();
  auto [it, inserted] =
      ops_.try_emplace(name, std::make_unique<OpRegistrationData>(std::move(data)));
  if (!inserted) return errors::AlreadyExists("op '", name, "' is already registered");
  return absl::OkStatus();
}

const OpRegistrationData* OpRegistry::LookUp(absl::string_view op_name) const {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(op_name);
  return it == ops_.end() ? nullptr : it->second.get();
}

absl::Status OpRegistry::LookUpOpDef(absl::string_view op_name, const OpDef** op_def) const {
  const OpRegistrationData* data = LookUp(op_name);
  if (data == nullptr) {
    return errors::Unimplemented("op '", op_name, "' is not registered");
  }
  *op_def = &data->op_def;
  return absl::OkStatus();
}

std::vector<std::string> OpRegistry::ListOpNames() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const auto& [name, data] : ops_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

namespace internal {
OpDefBuilderReceiver::OpDefBuilderReceiver(const OpDefBuilder& builder) {
  OpRegistrationData data;
  absl::Status s = builder.Finalize(&data);
  if (s.ok()) s = OpRegistry::Global()->Register(std::move(data));
  DF_CHECK_MSG(s.ok(), s.ToString());
}
}  // namespace internal

}  // namespace distflow
