#include "distflow/distributed_runtime/verbs/ibverbs_provider.h"

#include "distflow/core/status.h"

namespace distflow {

absl::StatusOr<std::unique_ptr<VerbsProvider>> NewIbverbsProvider() {
  return errors::Unimplemented("built without libibverbs");
}

}  // namespace distflow
