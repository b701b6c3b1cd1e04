// The process-wide table of op definitions. Ops register at static
// initialization with REGISTER_OP; lookups are thread-safe and lock-free
// after registration finishes.
#ifndef DISTFLOW_FRAMEWORK_OP_REGISTRY_H_
#define DISTFLOW_FRAMEWORK_OP_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "distflow/framework/op_def_builder.h"

namespace distflow {

class OpRegistry {
 public:
  static OpRegistry* Global();

  // AlreadyExists if an op of that name is registered.
  absl::Status Register(OpRegistrationData data);
  // nullptr when not registered.
  const OpRegistrationData* LookUp(absl::string_view op_name) const;
  // Unimplemented "op 'X' is not registered" when missing.
  absl::Status LookUpOpDef(absl::string_view op_name, const OpDef** op_def) const;
  std::vector<std::string> ListOpNames() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<OpRegistrationData>> ops_ ABSL_GUARDED_BY(mu_);
};

namespace internal {
// Registers the builder's op when constructed; a bad spec aborts at startup
// (a bug in distflow's own op table, never user input).
struct OpDefBuilderReceiver {
  OpDefBuilderReceiver(const OpDefBuilder& builder);  // NOLINT
};
}  // namespace internal

#define REGISTER_OP(name) DF_REGISTER_OP_UNIQ_HELPER(__COUNTER__, name)
#define DF_REGISTER_OP_UNIQ_HELPER(ctr, name) DF_REGISTER_OP_UNIQ(ctr, name)
#define DF_REGISTER_OP_UNIQ(ctr, name)                                                     \
  static ::distflow::internal::OpDefBuilderReceiver df_register_op##ctr [[maybe_unused]] = \
      ::distflow::OpDefBuilder(name)

}  // namespace distflow

#endif  // DISTFLOW_FRAMEWORK_OP_REGISTRY_H_
